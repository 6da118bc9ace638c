package storetest

import (
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// DAG steps (TaskOptions.Parents): AdvanceStep makes a waiting step due
// for the earliest fire its parents completed, once, whoever asks; results
// travel from parent runs to the step (Finish.Result, ParentResults).
var dagCases = []testCase{
	{"AdvanceAfterAllParents", testDagAdvanceAfterAll},
	{"AdvanceOnceUnderRace", testDagAdvanceOnceUnderRace},
	{"PausedPasses", testDagPausedPasses},
}

// dagParentRun records a run of parent p (claimed on node) at fire with
// status st and the result res, and returns the parent's row after it.
func (e *env) dagParentRun(p repository.Task, node repository.NodeID, fire time.Time, st repository.ExecStatus, res string) repository.Task {
	e.t.Helper()
	p = e.task(p.Name)
	p = e.claim(node, p)[0]
	x, err := e.s.StartExecution(e.ctx, p.Claim(), repository.Execution{ScheduledAt: fire, Attempt: 1})
	if err != nil {
		e.t.Fatalf("StartExecution of %s: %v", p.Name, err)
	}
	f := keep(p, x.ID, st)
	f.Keep, f.Result = false, res
	return e.finishHeld(f)
}

// fireAfterSteps is a fire time on a whole second after the store's now,
// so after the creation of every step made so far: a step follows only
// the fires after it was created. A fire taken before a slow creation
// (through a pooler) could fall before it.
func (e *env) fireAfterSteps() time.Time {
	return e.now().Add(time.Second).Truncate(time.Second)
}

// dagStep inserts a waiting step after parents and returns it and the
// advance that asks for it.
func (e *env) dagStep(name string, parents ...string) (repository.Task, repository.StepAdvance) {
	e.t.Helper()
	d := repository.TaskDef{Name: name, NextStartTime: repository.AwaitingParents, Options: repository.TaskOptions{Parents: repository.NamesOf(parents...)}}
	t := e.upsert(d)[0]
	a := repository.StepAdvance{Group: e.g, Step: name}
	for _, p := range parents {
		a.Parents = append(a.Parents, repository.StepParent{Name: p, Attempts: 1})
	}
	return t, a
}

// A step waits until every parent succeeded for one fire; then it is due
// at that fire (kind chain, a new version) with its parents' results; an
// ask with nothing new changes nothing.
func testDagAdvanceAfterAll(e *env) {
	n := e.node("n")
	b, c := e.pending("b"), e.pending("c")
	step, adv := e.dagStep("d", "b", "c")
	fire := e.fireAfterSteps()
	e.dagParentRun(b, n.ID, fire, repository.ExecSucceeded, `{"rows":1}`)
	if f, err := e.s.AdvanceStep(e.ctx, adv); err != nil || !f.IsZero() {
		e.t.Fatalf("AdvanceStep with one parent done: %v, %v; want nothing", f, err)
	}
	e.dagParentRun(c, n.ID, fire, repository.ExecSucceeded, "")
	f, err := e.s.AdvanceStep(e.ctx, adv)
	if err != nil || !f.Equal(fire) {
		e.t.Fatalf("AdvanceStep: %v, %v; want %v", f, err, fire)
	}
	got := e.task("d")
	if got.Status != repository.TaskPending || !got.NextStartTime.Equal(fire) || got.FireKind != repository.RunChain || got.Version <= step.Version {
		e.t.Fatalf("step after advance: %+v", got)
	}
	res, err := e.s.ParentResults(e.ctx, got.ID)
	if err != nil || res["b"] != `{"rows":1}` || res["c"] != "" || len(res) != 2 {
		e.t.Fatalf("ParentResults: %v, %v", res, err)
	}
	if f, err := e.s.AdvanceStep(e.ctx, adv); err != nil || !f.IsZero() {
		e.t.Fatalf("AdvanceStep of a due step: %v, %v; want nothing", f, err)
	}
	if again := e.task("d"); again.Version != got.Version {
		e.t.Fatalf("a second ask moved the row: %+v", again)
	}
}

// Many askers at once (the parents' nodes, the sweeps) make the step due
// once.
func testDagAdvanceOnceUnderRace(e *env) {
	n := e.node("n")
	b, c := e.pending("b"), e.pending("c")
	_, adv := e.dagStep("d", "b", "c")
	fire := e.fireAfterSteps()
	e.dagParentRun(b, n.ID, fire, repository.ExecSucceeded, "")
	e.dagParentRun(c, n.ID, fire, repository.ExecSucceeded, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := 0
	for range 8 {
		wg.Go(func() {
			f, err := e.s.AdvanceStep(e.ctx, adv)
			if err != nil {
				e.t.Errorf("AdvanceStep: %v", err)
				return
			}
			if !f.IsZero() {
				mu.Lock()
				made++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if made != 1 {
		e.t.Fatalf("%d askers made the step due; want 1", made)
	}
}

// A paused step passes the fires completed while paused: after a resume
// it is not due for them.
func testDagPausedPasses(e *env) {
	n := e.node("n")
	b := e.pending("b")
	_, adv := e.dagStep("d", "b")
	fire := e.fireAfterSteps()
	if _, err := e.s.Pause(e.ctx, e.g, "d"); err != nil {
		e.t.Fatal(err)
	}
	e.dagParentRun(b, n.ID, fire, repository.ExecSucceeded, "")
	if f, err := e.s.AdvanceStep(e.ctx, adv); err != nil || !f.IsZero() {
		e.t.Fatalf("AdvanceStep of a paused step: %v, %v; want nothing", f, err)
	}
	if _, err := e.s.Resume(e.ctx, e.g, "d"); err != nil {
		e.t.Fatal(err)
	}
	if f, err := e.s.AdvanceStep(e.ctx, adv); err != nil || !f.IsZero() {
		e.t.Fatalf("AdvanceStep after resume: %v, %v; want the paused fire passed", f, err)
	}
	e.dagParentRun(b, n.ID, fire.Add(5*time.Second), repository.ExecSucceeded, "")
	if f, err := e.s.AdvanceStep(e.ctx, adv); err != nil || !f.Equal(fire.Add(5*time.Second)) {
		e.t.Fatalf("AdvanceStep of the next fire: %v, %v", f, err)
	}
}
