package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestTasksPaged: tasks lists a page by name, names the next page on
// stderr (the output stays JSON), and walks every page with --limit 0.
func TestTasksPaged(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	c := &cli{t: t, bin: buildCLI(t), dsn: dsn}
	c.run("migrate", "up").want(t, 0, "migrate up")
	store := pgtest.OpenStore(t, dsn)
	ctx := context.Background()
	var defs []repository.TaskDef
	for i := range 5 {
		defs = append(defs, repository.TaskDef{Name: fmt.Sprintf("t%d", i), Cron: "0 0 * * * *", NextStartTime: time.Now().Add(time.Hour)})
	}
	if _, err := store.UpsertTasks(ctx, "paged", defs); err != nil {
		t.Fatal(err)
	}
	names := func(r result) []string {
		t.Helper()
		var ts []easyjob.TaskInfo
		if err := json.Unmarshal([]byte(r.stdout), &ts); err != nil {
			t.Fatalf("tasks --json: %v\n%s", err, r.stdout)
		}
		var out []string
		for _, x := range ts {
			out = append(out, x.Name)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want []string
		next string // the page after, named on stderr
	}{
		{[]string{"--limit", "2"}, []string{"t0", "t1"}, "t1"},
		{[]string{"--limit", "2", "--after", "t1"}, []string{"t2", "t3"}, "t3"},
		{[]string{"--limit", "2", "--after", "t3"}, []string{"t4"}, ""},
		{[]string{"--limit", "0"}, []string{"t0", "t1", "t2", "t3", "t4"}, ""},
		{[]string{"--search", "T3"}, []string{"t3"}, ""},
	} {
		r := c.run(append([]string{"tasks", "--group", "paged", "--json"}, tc.args...)...).want(t, 0, strings.Join(tc.args, " "))
		if got := names(r); !slices.Equal(got, tc.want) {
			t.Errorf("tasks %v: %v, want %v", tc.args, got, tc.want)
		}
		if said := strings.Contains(r.stderr, "--after "+tc.next+" for the next page"); (tc.next != "") != said {
			t.Errorf("tasks %v: stderr %q, want the next page after %q named", tc.args, r.stderr, tc.next)
		}
	}
}
