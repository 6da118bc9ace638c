package main

import (
	"strings"
	"testing"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/harness"
)

// TestCommandTable checks the one command table: unique names, one-line
// help, a run func, and the node process the harness re-executes this
// binary with dispatched (hidden) to the harness.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if c.name == "" || seen[c.name] {
			t.Errorf("command %q: empty or repeated name", c.name)
		}
		seen[c.name] = true
		if c.help == "" || strings.Contains(c.help, "\n") {
			t.Errorf("command %q: help %q is not one line", c.name, c.help)
		}
		if c.run == nil {
			t.Errorf("command %q: no run func", c.name)
		}
	}
	node, ok := lookup(harness.NodeCommand)
	if !ok || !node.hidden {
		t.Fatalf("%s: found %v, hidden %v; the harness starts node processes with it", harness.NodeCommand, ok, node.hidden)
	}
	for _, name := range []string{"migrate", "status", "tasks", "nodes", "history", "trigger", "pause", "resume", "reschedule", "audit", "create", "update", "versions", "bench", "chaos"} {
		if c, ok := lookup(name); !ok || c.hidden {
			t.Errorf("%s: found %v, hidden %v", name, ok, c.hidden)
		}
	}
}
