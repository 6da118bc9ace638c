package storetest

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var chainRunCases = []testCase{
	{"ChainRun", testChainRun},
}

// A chain whose node died after its first step: recovery marks the root's
// run abandoned and the task's last status abandoned; ChainRun returns
// that run and the step recorded under it, so a peer can resume. It
// returns the newest run of the fire whatever its status (a chain
// interrupted by the database resumes the same way).
func testChainRun(e *env) {
	dead := e.node("dead")
	n := e.now()
	e.upsert(def("root", n), repository.TaskDef{Name: "step", Parent: "root", NextStartTime: n})
	root := e.claim(dead.ID, e.pending("root"))[0]
	scheduled := root.NextStartTime
	rootRun, err := e.s.StartExecution(e.ctx, root.Claim(), repository.Execution{ScheduledAt: scheduled, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	step := e.claim(dead.ID, e.task("step"))[0]
	stepRun, err := e.s.StartExecution(e.ctx, step.Claim(), repository.Execution{ParentExecutionID: rootRun.ID, ScheduledAt: scheduled, Attempt: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	e.finish(repository.Finish{Claim: step.Claim(), Revision: step.Revision, ExecutionID: stepRun.ID, Status: repository.ExecSucceeded, Next: n.Add(time.Hour), NextAttempt: 1})

	if got, err := e.s.ChainRun(e.ctx, root.ID, scheduled); err != nil || len(got) != 2 || got[0].Status != repository.ExecRunning {
		e.t.Fatalf("ChainRun before the recovery = %+v, %v; want the running root and its step", got, err)
	}
	errs, err := e.s.RecoverAll(e.ctx, []repository.Recovery{{Ref: root.Ref(), DeadNode: dead.ID}})
	if err != nil || errs[0] != nil {
		e.t.Fatalf("RecoverAll = %v, %v", errs, err)
	}
	if got := e.task("root"); got.LastStatus != repository.ExecAbandoned {
		e.t.Errorf("root's last status after recovery = %q, want abandoned", got.LastStatus)
	}
	got, err := e.s.ChainRun(e.ctx, root.ID, scheduled)
	if err != nil || len(got) != 2 {
		e.t.Fatalf("ChainRun = %+v, %v; want the root's run and the step's", got, err)
	}
	if got[0].ID != rootRun.ID || got[0].Status != repository.ExecAbandoned || got[0].TaskName != "root" {
		e.t.Errorf("ChainRun[0] = %+v; want root's run %d, abandoned", got[0], rootRun.ID)
	}
	if got[1].ID != stepRun.ID || got[1].Status != repository.ExecSucceeded || got[1].TaskName != "step" || got[1].ParentExecutionID != rootRun.ID {
		e.t.Errorf("ChainRun[1] = %+v; want step's run %d under %d, succeeded", got[1], stepRun.ID, rootRun.ID)
	}
	if other, err := e.s.ChainRun(e.ctx, root.ID, scheduled.Add(time.Second)); err != nil || len(other) != 0 {
		e.t.Errorf("ChainRun of another fire = %+v, %v; want none", other, err)
	}
}
