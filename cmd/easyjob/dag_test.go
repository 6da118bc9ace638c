package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// TestHistoryDAG: `easyjob history NAME --dag/--fire` on a cluster of two
// nodes running a diamond a -> b, c -> d, a chain step d-mail after d, and
// a 3-shard task s after a with e after its shards: from any task of the
// graph, one fire lists every task parents first, the shards under s, the
// chain step under d, each with the parents it waited for; --json says the
// same; history of s lists its shards' runs with shard and shards.
func TestHistoryDAG(t *testing.T) {
	const group = "dag"
	c, store, s1 := cliNode(t, group)
	nop := zerolog.Nop()
	s2, err := easyjob.New(easyjob.Config{Store: store, Group: group, SkipMigrate: true, Logger: &nop})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(ctx context.Context) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	}
	for _, s := range []*easyjob.Scheduler{s1, s2} {
		for _, err := range []error{
			s.Register("a", "*/2 * * * * *", ok),
			s.Register("b", "", ok, easyjob.Parents("a")),
			s.Register("c", "", ok, easyjob.Parents("a")),
			s.Register("d", "", ok, easyjob.Parents("b", "c")),
			s.Register("d-mail", "", ok, easyjob.Parent("d")),
			s.Register("s", "", ok, easyjob.Parents("a"), easyjob.Shards(3)),
			s.Register("e", "", ok, easyjob.Parents("s")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		runScheduler(t, s)
	}
	client, err := easyjob.NewClient(t.Context(), easyjob.Config{Store: store, Group: group, SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	// A fire every task of the graph finished: e's and d-mail's both.
	var fire time.Time
	deadline := time.Now().Add(45 * time.Second)
	for fire.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no fire reached both e and d-mail within 45s")
		}
		time.Sleep(200 * time.Millisecond)
		es, err := client.History(t.Context(), "e", easyjob.HistoryFilter{Status: repository.ExecSucceeded, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := client.History(t.Context(), "d-mail", easyjob.HistoryFilter{Status: repository.ExecSucceeded, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if slices.ContainsFunc(ms, func(m easyjob.ExecutionInfo) bool { return m.ScheduledAt.Equal(e.ScheduledAt) }) {
				fire = e.ScheduledAt
				break
			}
		}
	}
	g := func(args ...string) []string { return append(args, "--group", group) }
	at := fire.UTC().Format("2006-01-02 15:04:05.000")

	// The text, asked from a leaf, a middle task and a shard row.
	var text string
	for _, name := range []string{"e", "b", "s[1]"} {
		r := c.run(g("history", name, "--fire", at)...).want(t, 0, "history "+name+" --fire")
		if text == "" {
			text = r.stdout
			t.Logf("history e --fire %s:\n%s", at, text)
		} else if r.stdout != strings.Replace(text, "DAG of e", "DAG of "+name, 1) {
			t.Errorf("history %s --fire: another graph than e's:\n%s", name, r.stdout)
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "fire "+at+" UTC of the DAG of e: 7 tasks") {
		t.Errorf("first line %q", lines[0])
	}
	var order []string
	after := map[string]string{}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		name := l[:len(l)-len(strings.TrimLeft(l, " "))] + f[0] // indented
		order = append(order, name)
		if f[2] != "succeeded" {
			t.Errorf("%s: %s, want succeeded: %q", name, f[2], l)
		}
		after[f[0]] = strings.Join(f[8:len(f)-1], " ")
	}
	want := []string{"a", "b", "c", "s", "  s[0]", "  s[1]", "  s[2]", "d", "  d-mail", "e"}
	if !slices.Equal(order, want) {
		t.Errorf("lines in order %q, want %q", order, want)
	}
	for task, parents := range map[string]string{"a": "-", "b": "a", "c": "a", "s": "a", "s[1]": "s (split)", "d": "b, c", "d-mail": "d (chain)", "e": "s[0..2]"} {
		if after[task] != parents {
			t.Errorf("%s after %q, want %q", task, after[task], parents)
		}
	}

	// The same as JSON; the newest fire with --dag alone.
	r := c.run(g("history", "d", "--fire", fire.Format(time.RFC3339Nano), "--json")...).want(t, 0, "history d --fire --json")
	var graph easyjob.FireGraph
	if err := json.Unmarshal([]byte(r.stdout), &graph); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, s := range graph.Steps {
		names = append(names, s.Task)
		switch s.Task {
		case "d":
			if !slices.Equal(s.Parents, []string{"b", "c"}) || len(s.Runs) != 1 || s.Runs[0].Kind != repository.RunChain || !s.Runs[0].ScheduledAt.Equal(fire) {
				t.Errorf("d: %+v", s)
			}
		case "d-mail":
			if s.Chain != "d" || s.Depth != 1 || len(s.Runs) != 1 || s.Runs[0].ParentExecutionID == 0 {
				t.Errorf("d-mail: %+v", s)
			}
		case "s":
			shards := map[int]bool{}
			for _, x := range s.Runs {
				if x.Shard != nil && x.Shards == 3 && x.Status == repository.ExecSucceeded {
					shards[*x.Shard] = true
				}
			}
			if s.Shards != 3 || len(s.Runs) != 4 || len(shards) != 3 {
				t.Errorf("s: %d shards, runs %+v; want its split and 3 shard runs", s.Shards, s.Runs)
			}
		case "e":
			if !slices.Equal(s.Parents, []string{"s"}) {
				t.Errorf("e after %q, want s", s.Parents)
			}
		}
	}
	if !graph.Fire.Equal(fire) || !slices.Equal(names, []string{"a", "b", "c", "s", "d", "d-mail", "e"}) {
		t.Errorf("--json: fire %v, steps %q", graph.Fire, names)
	}
	if r := c.run(g("history", "d-mail", "--dag")...).want(t, 0, "history --dag"); !strings.Contains(r.stdout, "of the DAG of d-mail: 7 tasks") {
		t.Errorf("history d-mail --dag:\n%s", r.stdout)
	}

	// History of the sharded task: its shards' runs, with shard and shards.
	r = c.run(g("history", "s", "--json", "--limit", "6")...).want(t, 0, "history s --json")
	var runs []easyjob.ExecutionInfo
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) == 0 {
		t.Fatalf("history s --json = %q (%v)", r.stdout, err)
	}
	for _, x := range runs {
		if x.Task != "s" || x.Shard == nil || x.Shards != 3 || !strings.Contains(r.stdout, `"shards": 3`) && !strings.Contains(r.stdout, `"shards":3`) {
			t.Errorf("history s: run %+v, want shard of 3", x)
		}
	}

	// Refusals.
	c.run(g("history", "d", "--fire", "yesterday")...).want(t, exitUsage, "--fire not a time")
	c.run(g("history", "d", "--dag", "--limit", "5")...).want(t, exitUsage, "--dag with --limit")
	c.run(g("history", "nope", "--dag")...).want(t, exitNotFound, "--dag of an unknown task")
}
