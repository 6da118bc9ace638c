package storetest

import (
	"reflect"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var dueCases = []testCase{
	{"Filters", testDueFilters},
	{"StoreClockWindow", testDueStoreClockWindow},
	{"OrderAndLimit", testDueOrderAndLimit},
	{"TriggeredWhilePaused", testDueTriggeredWhilePaused},
}

func (e *env) due(window time.Duration, limit int, names ...string) ([]repository.TaskID, time.Time) {
	e.t.Helper()
	d, err := e.s.DueTasks(e.ctx, repository.DueQuery{Group: e.g, Handlers: names, Window: window, Limit: limit})
	if err != nil {
		e.t.Fatalf("DueTasks: %v", err)
	}
	for _, t := range d.Tasks {
		if t.Group != e.g || t.Status != repository.TaskPending {
			e.t.Errorf("DueTasks returned %+v", t)
		}
	}
	return taskIDs(d.Tasks), d.Now
}

func (e *env) wantDue(what string, got []repository.TaskID, want ...repository.Task) {
	e.t.Helper()
	if w := taskIDs(want); !reflect.DeepEqual(got, w) && !(len(got) == 0 && len(w) == 0) {
		e.t.Errorf("%s: DueTasks = %v, want %v", what, got, w)
	}
}

func testDueFilters(e *env) {
	n := e.now()
	past := n.Add(-time.Second)
	fin := def("finished", past)
	fin.Finished = true
	ts := e.upsert(
		def("due", past),
		def("later", n.Add(time.Hour)),
		repository.TaskDef{Name: "child", Parent: "due", NextStartTime: past},
		def("unregistered", past),
		def("doing", past),
		def("paused", past),
		fin,
	)
	due, doing := ts[0], ts[4]
	e.upsertIn(e.other(), def("due", past))
	e.claim(e.node("n").ID, doing)
	if _, err := e.s.Pause(e.ctx, e.g, "paused"); err != nil {
		e.t.Fatal(err)
	}
	names := []string{"due", "later", "child", "doing", "paused", "finished", "absent"}
	before := e.now()
	got, now := e.due(time.Second, 0, names...)
	after := e.now()
	e.within("Due.Now", now, before, after)
	e.wantDue("only the pending root registered task", got, due)
	got, _ = e.due(2*time.Hour, 0, names...)
	e.wantDue("with a window reaching the later task", got, due, ts[1])
	got, _ = e.due(2*time.Hour, 0)
	e.wantDue("no names", got)
}

// A task due at storeNow+2s is inside a 3s window and outside a 1s one,
// whatever the test process's clock says.
func testDueStoreClockWindow(e *env) {
	n := e.now()
	soon := e.upsert(def("soon", n.Add(2*time.Second)))[0]
	got, _ := e.due(3*time.Second, 0, "soon")
	e.wantDue("window 3s", got, soon)
	got, _ = e.due(time.Second, 0, "soon")
	e.wantDue("window 1s", got)
	got, _ = e.due(0, 0, "soon")
	e.wantDue("window 0", got)
	overdue := e.upsert(def("overdue", n.Add(-time.Millisecond)))[0]
	got, _ = e.due(0, 0, "soon", "overdue")
	e.wantDue("overdue with window 0", got, overdue)
}

func testDueOrderAndLimit(e *env) {
	n := e.now()
	ts := e.upsert(
		def("c", n.Add(-time.Second)),
		def("a", n.Add(-time.Second)),
		def("first", n.Add(-2*time.Second)),
		def("b", n.Add(-time.Second)),
	)
	// Same next_start_time: by id.
	same := []repository.Task{ts[0], ts[1], ts[3]}
	for i := 1; i < len(same); i++ {
		for j := i; j > 0 && same[j].ID < same[j-1].ID; j-- {
			same[j], same[j-1] = same[j-1], same[j]
		}
	}
	names := []string{"a", "b", "c", "first"}
	got, _ := e.due(0, 0, names...)
	e.wantDue("order", got, ts[2], same[0], same[1], same[2])
	got, _ = e.due(0, 2, names...)
	e.wantDue("limit 2", got, ts[2], same[0])
}

func testDueTriggeredWhilePaused(e *env) {
	t := e.upsert(def("parked", e.now().Add(time.Hour)))[0]
	if _, err := e.s.Pause(e.ctx, e.g, "parked"); err != nil {
		e.t.Fatal(err)
	}
	got, _ := e.due(2*time.Hour, 0, "parked")
	e.wantDue("paused", got)
	if _, err := e.s.Trigger(e.ctx, e.g, "parked", ""); err != nil {
		e.t.Fatal(err)
	}
	got, _ = e.due(0, 0, "parked")
	e.wantDue("paused then triggered", got, t)
}
