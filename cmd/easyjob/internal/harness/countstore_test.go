package harness

import (
	"reflect"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestCountingStoreCountsEveryMethod fails when repository.Store (or
// Notifier) gains a method the counting decorator does not count itself.
func TestCountingStoreCountsEveryMethod(t *testing.T) {
	counted := map[string]bool{"Close": true}
	for _, n := range methodNames {
		counted[n] = true
	}
	for _, iface := range []reflect.Type{
		reflect.TypeOf((*repository.Store)(nil)).Elem(),
		reflect.TypeOf((*repository.Notifier)(nil)).Elem(),
	} {
		for i := range iface.NumMethod() {
			m := iface.Method(i).Name
			if !counted[m] {
				t.Errorf("repository.%s.%s is not counted by countingStore: add a methodNames entry", iface.Name(), m)
			}
		}
	}
}

// TestCountingStoreCounts: calls, errors and claims as a node makes them.
func TestCountingStoreCounts(t *testing.T) {
	ctx := t.Context()
	s, c := newCountingStore(memory.New())
	n, err := s.RegisterNode(ctx, "g", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := s.Now(ctx)
	rows, err := s.UpsertTasks(ctx, "g", []repository.TaskDef{{Name: "a", Cron: "* * * * * *", NextStartTime: now}})
	if err != nil {
		t.Fatal(err)
	}
	stale := rows[0].Ref()
	stale.Version++
	if _, err := s.Claim(ctx, n.ID, []repository.TaskRef{rows[0].Ref(), stale}); err != nil {
		t.Fatal(err)
	}
	_, _ = s.Pause(ctx, "g", "missing")
	st := c.snapshot()
	if st.Calls["Claim"] != 1 || st.ClaimAsked != 2 || st.ClaimWon != 1 {
		t.Errorf("claims: calls %d asked %d won %d, want 1, 2, 1", st.Calls["Claim"], st.ClaimAsked, st.ClaimWon)
	}
	if st.Errors["Pause"] != 1 || len(st.NodeIDs) != 1 || st.NodeIDs[0] != int64(n.ID) {
		t.Errorf("errors %v, node ids %v", st.Errors, st.NodeIDs)
	}
}
