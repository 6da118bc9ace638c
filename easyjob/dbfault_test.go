package easyjob

import (
	"context"
	"testing"
	"time"
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
	time.Sleep(2 * time.Second)
	admin := pgStoreAdmin(t)
	for range 3 {
		if _, err := admin.ExecContext(context.Background(),
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
	}
	resumed := time.Now()
	time.Sleep(4 * time.Second)
	for _, n := range nodes {
		select {
		case err := <-n.done:
			t.Fatalf("node %d exited: %v", n.n.id(), err)
		default:
		}
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("duplicate fires after connection cuts: %v", d[:min(5, len(d))])
	}
	assertEachSecondOnce(t, &l, names(30), resumed, time.Now().Add(-time.Second))
}
