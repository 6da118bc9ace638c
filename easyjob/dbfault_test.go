package easyjob

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TestConnectionsCut: every connection of the cluster is terminated by the
// server several times mid-run (as in a PostgreSQL restart). Nodes survive,
// reconnect and keep firing, and no fire runs twice.
func TestConnectionsCut(t *testing.T) {
	store, group := pgStore(t)
	var l ledger
	var nodes []*testNode
	for range 3 {
		nodes = append(nodes, start(t, Config{Store: store, Group: group, Strategy: "id_hash"}, everySecond(t, &l, 30)))
	}
	// Mid-run: every node has finished a fire of its own.
	for _, n := range nodes {
		finishedAfter(t, n, time.Time{})
	}
	admin := pgStoreAdmin(t)
	var cut time.Time
	for range 3 {
		cut = time.Now()
		if _, err := admin.ExecContext(context.Background(),
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		// The next cut hits a cluster that is back: every node reconnected
		// and wrote a heartbeat.
		for _, n := range nodes {
			n.beatAfter(t, cut, 10*time.Second)
		}
	}
	// Back: every node finished a fire due after the last cut.
	for _, n := range nodes {
		finishedAfter(t, n, cut.Add(time.Second))
	}
	resumed := time.Now()
	// A window, not a wait: every second of it must fire each task once.
	time.Sleep(4 * time.Second)
	for _, n := range nodes {
		select {
		case err := <-n.done:
			t.Fatalf("node %d exited: %v", n.n.ID(), err)
		default:
		}
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("duplicate fires after connection cuts: %v", d[:min(5, len(d))])
	}
	assertEachSecondOnce(t, &l, names(30), resumed, time.Now().Add(-time.Second))
}

// finishedAfter waits until node n wrote the finish of a fire whose next
// fire is after since.
func finishedAfter(t *testing.T, n *testNode, since time.Time) {
	t.Helper()
	waitSignal(t, &n.hooks.FireFinished, 10*time.Second, fmt.Sprintf("a fire finished on node %d", n.n.ID()),
		func(res repository.FinishResult) bool { return res.Err == nil && res.Task.NextStartTime.After(since) })
}
