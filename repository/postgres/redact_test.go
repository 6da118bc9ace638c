package postgres_test

import (
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

func TestRedactDSN(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"url no password", "postgres://u@h/db", "postgres://u@h/db"},
		{"url no user", "postgres://h/db", "postgres://h/db"},
		{"url escaped password", "postgresql://u:p%40ss%2Fw@h/db", "postgresql://u:xxxxx@h/db"},
		{"url password param", "postgres://u@h/db?password=secret&sslmode=disable", "postgres://u@h/db?password=xxxxx&sslmode=disable"},
		{"url unparsable", "postgres://u:se%cret@h/db", "postgres://u:xxxxx@h/db"},
		{"kv", "host=h user=u password=secret dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"kv quoted", `host=h password='se cr\'et' dbname=db`, "host=h password=xxxxx dbname=db"},
		{"kv spaces", "host=h password = secret dbname=db", "host=h password = xxxxx dbname=db"},
		{"kv upper", "PASSWORD=secret host=h", "PASSWORD=xxxxx host=h"},
		{"kv none", "host=h dbname=db", "host=h dbname=db"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postgres.RedactDSN(tt.dsn)
			if got != tt.want {
				t.Errorf("RedactDSN(%q) = %q, want %q", tt.dsn, got, tt.want)
			}
			if strings.Contains(got, "secret") || strings.Contains(got, "cr") && strings.Contains(tt.dsn, "se cr") {
				t.Errorf("RedactDSN(%q) = %q leaks the password", tt.dsn, got)
			}
		})
	}
}
