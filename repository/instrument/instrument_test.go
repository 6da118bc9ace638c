package instrument_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/instrument"
	"github.com/easyjob-go/easyjob/repository/memory"
)

var _ repository.Store = instrument.Wrap(memory.New(), &recorder{})

// recorder keeps what it sees.
type recorder struct {
	mu     sync.Mutex
	begins []string
	ends   []instrument.Call
}

func (r *recorder) Begin(op string, _ time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begins = append(r.begins, op)
}

func (r *recorder) End(c instrument.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, c)
}

func TestHooksSeeEachCallWithItsRows(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	s := instrument.Wrap(memory.New(), rec)
	n, err := s.RegisterNode(ctx, "g", "n1", 1)
	if err != nil {
		t.Fatal(err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.UpsertTasks(ctx, "g", []repository.TaskDef{{Name: "a", Cron: "* * * * * *", NextStartTime: now}})
	if err != nil {
		t.Fatal(err)
	}
	stale := rows[0].Ref()
	stale.Version++ // one of the two refs is stale: asked 2, won 1
	if _, err := s.Claim(ctx, n.ID, []repository.TaskRef{rows[0].Ref(), stale}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pause(ctx, "g", "missing"); err == nil {
		t.Fatal("Pause of a missing task: want an error")
	}
	wantOps := []string{"RegisterNode", "Now", "UpsertTasks", "Claim", "Pause"}
	if len(rec.ends) != len(wantOps) || len(rec.begins) != len(wantOps) {
		t.Fatalf("ends %v, begins %v; want %v", rec.ends, rec.begins, wantOps)
	}
	for i, op := range wantOps {
		if rec.begins[i] != op || rec.ends[i].Op != op {
			t.Errorf("call %d: begin %q end %q, want %q", i, rec.begins[i], rec.ends[i].Op, op)
		}
	}
	if c := rec.ends[0]; c.Node != n.ID || c.Err != nil {
		t.Errorf("RegisterNode: %+v, want node %d", c, n.ID)
	}
	if c := rec.ends[3]; c.Rows != 2 || c.Won != 1 {
		t.Errorf("Claim: rows %d won %d, want 2 and 1", c.Rows, c.Won)
	}
	if c := rec.ends[4]; c.Err == nil {
		t.Error("Pause: the hook did not see the error")
	}
}

func TestNoHooksIsTheStoreItself(t *testing.T) {
	s := memory.New()
	if got := instrument.Wrap(s); got != repository.Store(s) {
		t.Errorf("Wrap without hooks = %T, want the store itself", got)
	}
}
