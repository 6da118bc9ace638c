package easyjob

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/instrument"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// opRecorder records the store operations it observes.
type opRecorder struct {
	mu  sync.Mutex
	ops []observe.Event
}

func (r *opRecorder) Observe(e observe.Event) {
	if e.Kind != observe.EventStoreOp {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, e)
}

func (r *opRecorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.ops {
		out = append(out, e.Op)
	}
	return out
}

func TestStoreTimerReportsCalls(t *testing.T) {
	mem := memory.New()
	rec := &opRecorder{}
	s := instrument.Wrap(mem, &storeTimer{obs: rec, group: "g"})
	_, isNotifier := s.(repository.Notifier)
	_, memNotifies := repository.Store(mem).(repository.Notifier)
	if isNotifier != memNotifies {
		t.Fatalf("wrapped store notifies = %v, inner = %v", isNotifier, memNotifies)
	}
	ctx := context.Background()
	n, err := s.RegisterNode(ctx, "g", "n1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Task(ctx, "g", "missing"); err == nil {
		t.Fatal("expected ErrTaskNotFound")
	}
	got := rec.names()
	if want := []string{"RegisterNode", "Task"}; !slices.Equal(got, want) {
		t.Fatalf("ops = %v, want %v", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.ops[1].Err == nil || rec.ops[1].Node != int64(n.ID) || rec.ops[1].Group != "g" || rec.ops[1].Duration < 0 {
		t.Fatalf("Task op = %+v: want its error, node %d and group g", rec.ops[1], n.ID)
	}
}
