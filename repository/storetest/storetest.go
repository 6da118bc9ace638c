// Package storetest is the conformance suite of repository.Store: every row
// of docs/store-semantics.md as subtests that fail when a store breaks it.
// Both stores run it (repository/memory in its tests, repository/postgres
// against a real database).
//
// Every subtest asks for a fresh store and works in its own group, named
// after the test plus a per-process nonce, so one shared database can serve
// the whole suite and repeated runs. Times are computed from the store's
// clock (Store.Now), never from the test process's clock; liveness tests
// wait by polling Store.Now, for well under a second each.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Crons used by the suite. The store never parses them: it only stores and
// compares them.
const (
	cronA = "*/5 * * * * *"
	cronB = "0 * * * * *"
)

// slack is the liveness margin: a node "silent" in a test stopped
// heartbeating at least 2*slack ago, a "live" one heartbeated well within
// slack of the call that judges it.
const slack = 300 * time.Millisecond

// Run runs the suite. newStore is called once per subtest and must return
// a working store (migrated, for a database); it should register its own
// cleanup with t.Cleanup. Stores may share one database: subtests use
// distinct groups.
func Run(t *testing.T, newStore func(t *testing.T) repository.Store) {
	t.Helper()
	sections := []struct {
		name  string
		cases []testCase
	}{
		{"Nodes", nodeCases},
		{"Tasks", taskCases},
		{"Due", dueCases},
		{"Claim", claimCases},
		{"Executions", executionCases},
		{"Finish", finishCases},
		{"Append", appendCases},
		{"History", historyCases},
		{"Recovery", recoveryCases},
		{"ChainRun", chainRunCases},
		{"Control", controlCases},
		{"Notify", notifyCases},
		{"Lifecycle", lifecycleCases},
		{"Views", viewCases},
		{"Audit", auditCases},
		{"Schedules", scheduleCases},
		{"Revisions", revisionCases},
		{"Calendars", calendarCases},
		{"Backfill", backfillCases},
		{"Groups", groupCases},
		{"Cancel", cancelCases},
		{"EndRun", endRunCases},
		{"Broadcast", broadcastCases},
		{"RunLogs", runLogCases},
		{"Alerts", alertCases},
		{"DAG", dagCases},
	}
	for _, sec := range sections {
		t.Run(sec.name, func(t *testing.T) {
			for _, c := range sec.cases {
				t.Run(c.name, func(t *testing.T) {
					s := newStore(t)
					if s == nil {
						t.Fatal("newStore returned nil")
					}
					c.fn(&env{t: t, s: s, ctx: t.Context(), g: groupName(t)})
				})
			}
		})
	}
}

type testCase struct {
	name string
	fn   func(e *env)
}

var (
	runID   = strconv.FormatInt(time.Now().UnixNano(), 36)
	groupNo atomic.Int64
)

// groupName is unique per subtest and per process, short enough for any
// identifier a store may derive from it (a LISTEN channel, say).
func groupName(t *testing.T) string {
	name := t.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 24 {
		name = name[:24]
	}
	return fmt.Sprintf("st-%s-%d-%s", runID, groupNo.Add(1), name)
}

// env is one subtest: its store, context and group.
type env struct {
	t      *testing.T
	s      repository.Store
	ctx    context.Context
	g      string
	starts int // e.start calls: each gets its own fire time (the start key is unique)
}

// other names a second group for isolation checks.
func (e *env) other() string { return e.g + "-other" }

func (e *env) now() time.Time {
	e.t.Helper()
	n, err := e.s.Now(e.ctx)
	if err != nil {
		e.t.Fatalf("Now: %v", err)
	}
	if n.Nanosecond()%1000 != 0 {
		e.t.Fatalf("Now = %v: not truncated to microseconds", n)
	}
	return n
}

// waitPast polls the store clock until it is after t and returns it.
func (e *env) waitPast(t time.Time) time.Time {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second) // only a guard against a stuck clock
	for {
		if n := e.now(); n.After(t) {
			return n
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("store clock did not pass %v within 5s", t)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func def(name string, next time.Time) repository.TaskDef {
	return repository.TaskDef{Name: name, Cron: cronA, NextStartTime: next}
}

func (e *env) upsert(defs ...repository.TaskDef) []repository.Task {
	e.t.Helper()
	return e.upsertIn(e.g, defs...)
}

func (e *env) upsertIn(group string, defs ...repository.TaskDef) []repository.Task {
	e.t.Helper()
	ts, err := e.s.UpsertTasks(e.ctx, group, defs)
	if err != nil {
		e.t.Fatalf("UpsertTasks(%q): %v", group, err)
	}
	if len(ts) != len(defs) {
		e.t.Fatalf("UpsertTasks returned %d rows for %d defs", len(ts), len(defs))
	}
	for i, d := range defs {
		if ts[i].Name != d.Name || ts[i].Group != group {
			e.t.Fatalf("UpsertTasks row %d = %s/%s, want %s/%s (defs order)", i, ts[i].Group, ts[i].Name, group, d.Name)
		}
	}
	return ts
}

// pending inserts one pending root task due a second ago by the store clock.
func (e *env) pending(name string) repository.Task {
	e.t.Helper()
	return e.upsert(def(name, e.now().Add(-time.Second)))[0]
}

func (e *env) task(name string) repository.Task {
	e.t.Helper()
	return e.taskIn(e.g, name)
}

func (e *env) taskIn(group, name string) repository.Task {
	e.t.Helper()
	t, err := e.s.Task(e.ctx, group, name)
	if err != nil {
		e.t.Fatalf("Task(%q, %q): %v", group, name, err)
	}
	return t
}

func (e *env) node(name string) repository.Node {
	e.t.Helper()
	return e.nodeIn(e.g, name)
}

func (e *env) nodeIn(group, name string) repository.Node {
	e.t.Helper()
	n, err := e.s.RegisterNode(e.ctx, group, name, 1)
	if err != nil {
		e.t.Fatalf("RegisterNode(%q): %v", name, err)
	}
	return n
}

// claim claims ts for node and fails unless it wins every one; it returns
// the won rows in the order of ts.
func (e *env) claim(node repository.NodeID, ts ...repository.Task) []repository.Task {
	e.t.Helper()
	refs := make([]repository.TaskRef, len(ts))
	for i, t := range ts {
		refs[i] = t.Ref()
	}
	won, err := e.s.Claim(e.ctx, node, refs)
	if err != nil {
		e.t.Fatalf("Claim: %v", err)
	}
	if len(won) != len(ts) {
		e.t.Fatalf("Claim won %d of %d", len(won), len(ts))
	}
	byID := make(map[repository.TaskID]repository.Task, len(won))
	for _, w := range won {
		byID[w.ID] = w
	}
	out := make([]repository.Task, len(ts))
	for i, t := range ts {
		w, ok := byID[t.ID]
		if !ok {
			e.t.Fatalf("Claim did not return task %d", t.ID)
		}
		if w.Status != repository.TaskDoing || w.NodeID != node || w.Version != t.Version+1 {
			e.t.Fatalf("claimed row %+v: want doing by %d at version %d", w, node, t.Version+1)
		}
		out[i] = w
	}
	return out
}

// claimed inserts a pending task and claims it for node.
func (e *env) claimed(name string, node repository.NodeID) repository.Task {
	e.t.Helper()
	return e.claim(node, e.pending(name))[0]
}

func (e *env) start(t repository.Task) repository.Execution {
	e.t.Helper()
	e.starts++
	at := t.NextStartTime.Add(time.Duration(e.starts) * time.Millisecond)
	x, err := e.s.StartExecution(e.ctx, t.Claim(), repository.Execution{ScheduledAt: at, Attempt: t.Attempt})
	if err != nil {
		e.t.Fatalf("StartExecution(%+v): %v", t.Claim(), err)
	}
	return x
}

// recover recovers one orphan (RecoverAll of one) and returns its error.
func (e *env) recover(r repository.Recovery) error {
	errs, err := e.s.RecoverAll(e.ctx, []repository.Recovery{r})
	if err != nil {
		return err
	}
	return errs[0]
}

func (e *env) finish(fs ...repository.Finish) []repository.FinishResult {
	e.t.Helper()
	res, err := e.s.Finish(e.ctx, fs)
	if err != nil {
		e.t.Fatalf("Finish: %v", err)
	}
	if len(res) != len(fs) {
		e.t.Fatalf("Finish returned %d results for %d finishes", len(res), len(fs))
	}
	return res
}

// finishHeld finishes one execution and fails unless its fence held.
func (e *env) finishHeld(f repository.Finish) repository.Task {
	e.t.Helper()
	r := e.finish(f)[0]
	if r.Err != nil {
		e.t.Fatalf("Finish(%+v): %v", f.Claim, r.Err)
	}
	return r.Task
}

// keep is a plain successful finish of t's execution x keeping the claim
// for a fire a minute later.
func keep(t repository.Task, x int64, st repository.ExecStatus) repository.Finish {
	return repository.Finish{
		Claim: t.Claim(), Revision: t.Revision, ExecutionID: x, Status: st,
		Next: t.NextStartTime.Add(time.Minute), NextAttempt: 1, Cron: t.Cron, Keep: true,
	}
}

// runOnce records one execution of the held task t with status st and
// keeps the claim; it returns the task as rewritten and the execution id.
func (e *env) runOnce(t repository.Task, st repository.ExecStatus) (repository.Task, int64) {
	e.t.Helper()
	x := e.start(t)
	return e.finishHeld(keep(t, x.ID, st)), x.ID
}

func (e *env) history(name string, f repository.HistoryFilter) []repository.Execution {
	e.t.Helper()
	xs, err := e.s.History(e.ctx, e.g, name, f)
	if err != nil {
		e.t.Fatalf("History(%q, %+v): %v", name, f, err)
	}
	return xs
}

// exec reads one execution of task name through History.
func (e *env) exec(name string, id int64) repository.Execution {
	e.t.Helper()
	xs := e.history(name, repository.HistoryFilter{BeforeID: id + 1, Limit: 1})
	if len(xs) != 1 || xs[0].ID != id {
		e.t.Fatalf("execution %d of %q not found (History gave %+v)", id, name, xs)
	}
	return xs[0]
}

// within fails unless before <= got <= after.
func (e *env) within(what string, got, before, after time.Time) {
	e.t.Helper()
	if got.Before(before) || got.After(after) {
		e.t.Errorf("%s = %v, want within [%v, %v] (store clock)", what, got, before, after)
	}
}

// sameTask fails unless got and want are equal field by field (times by
// instant).
func (e *env) sameTask(what string, got, want repository.Task) {
	e.t.Helper()
	if g, w := utcTask(got), utcTask(want); !reflect.DeepEqual(g, w) {
		e.t.Errorf("%s:\n got  %+v\n want %+v", what, g, w)
	}
}

func utcTask(t repository.Task) repository.Task {
	t.NextStartTime = utc(t.NextStartTime)
	t.LastFinishedAt = utc(t.LastFinishedAt)
	t.CreatedAt = utc(t.CreatedAt)
	t.UpdatedAt = utc(t.UpdatedAt)
	t.OverriddenAt = utc(t.OverriddenAt)
	t.StaleSince = utc(t.StaleSince)
	return t
}

func (e *env) sameExec(what string, got, want repository.Execution) {
	e.t.Helper()
	norm := func(x repository.Execution) repository.Execution {
		x.ScheduledAt, x.StartedAt, x.FinishedAt = utc(x.ScheduledAt), utc(x.StartedAt), utc(x.FinishedAt)
		return x
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		e.t.Errorf("%s:\n got  %+v\n want %+v", what, g, w)
	}
}

func (e *env) sameNodes(what string, got []repository.Node, want ...repository.Node) {
	e.t.Helper()
	ids := func(ns []repository.Node) []repository.NodeID {
		out := make([]repository.NodeID, len(ns))
		for i, n := range ns {
			out[i] = n.ID
		}
		return out
	}
	if g, w := ids(got), ids(want); !reflect.DeepEqual(g, w) {
		e.t.Errorf("%s: node ids %v, want %v", what, g, w)
	}
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// micro truncates t like a timestamptz.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// wantErr fails unless err wraps target and, if mention is not empty,
// its message names mention.
func (e *env) wantErr(what string, err, target error, mention string) {
	e.t.Helper()
	if !errors.Is(err, target) {
		e.t.Errorf("%s: error %v, want one wrapping %v", what, err, target)
		return
	}
	if mention != "" && !strings.Contains(err.Error(), mention) {
		e.t.Errorf("%s: error %q does not name %q", what, err, mention)
	}
}

func taskIDs(ts []repository.Task) []repository.TaskID {
	out := make([]repository.TaskID, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
