package easyjob

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestObservedStoreTimesEveryMethod fails when repository.Store grows a
// method that observedStore does not override (the embedded Store would
// delegate it untimed).
func TestObservedStoreTimesEveryMethod(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "observedstore.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "observedStore" {
				declared[fn.Name.Name] = true
			}
		}
	}
	st := reflect.TypeFor[repository.Store]()
	for i := range st.NumMethod() {
		if m := st.Method(i).Name; !declared[m] {
			t.Errorf("observedStore does not time repository.Store.%s: add an override in observedstore.go", m)
		}
	}
}

// opRecorder records the store operations it observes.
type opRecorder struct {
	mu  sync.Mutex
	ops []Event
}

func (r *opRecorder) Observe(e Event) {
	if e.Kind != EventStoreOp {
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

func TestObservedStoreReportsCalls(t *testing.T) {
	mem := memory.New()
	if got := observeStore(mem, nil, "g"); got != repository.Store(mem) {
		t.Fatalf("without an observer the store must be used as it is, got %T", got)
	}
	rec := &opRecorder{}
	s := observeStore(mem, rec, "g")
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
