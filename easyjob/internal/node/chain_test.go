package node

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestMayHaveRun: a chain's earlier run of a fire is read only where one
// can exist, so an ordinary chain fire costs no extra round trip.
func TestMayHaveRun(t *testing.T) {
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		what string
		t    repository.Task
		want bool
	}{
		{"never finished", repository.Task{NextStartTime: at}, false},
		{"planned ahead of its last finish", repository.Task{NextStartTime: at, LastFinishedAt: at.Add(-time.Second)}, false},
		{"left due by a chain cut short", repository.Task{NextStartTime: at, LastFinishedAt: at.Add(2 * time.Second)}, true},
		{"its node died", repository.Task{NextStartTime: at, LastFinishedAt: at.Add(-time.Second), LastStatus: repository.ExecAbandoned}, true},
	} {
		if got := mayHaveRun(c.t); got != c.want {
			t.Errorf("%s: mayHaveRun = %v, want %v", c.what, got, c.want)
		}
	}
}
