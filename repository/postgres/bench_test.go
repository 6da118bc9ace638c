package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// The benchmarks below time one batched statement of the store at 1, 100
// and 1000 rows, so a plan regression shows as a drop in rows/s. Each
// iteration leaves the rows in a known state for the next: what the timed
// statement needs is prepared with the timer stopped.

// benchBatches are the batch sizes every statement is measured at.
var benchBatches = []int{1, 100, 1000}

// benchBatch runs body for each batch size on a fresh group of pending
// tasks in the shared database and reports rows/s and ns/row.
func benchBatch(b *testing.B, body func(b *testing.B, f *benchFixture)) {
	s := pgtest.OpenStore(b, pgtest.SharedDatabase(b))
	for _, n := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			f := newBenchFixture(b, s, n)
			b.ResetTimer()
			body(b, f)
			b.StopTimer()
			rows := float64(b.N * n)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
		})
	}
}

// benchFixture is a group of tasks on one node, with the rows as the
// store last returned them.
type benchFixture struct {
	s     repository.Store
	ctx   context.Context
	node  repository.NodeID
	tasks []repository.Task // ordered by id
	base  time.Time         // fire times are base + fires seconds
	fires int
}

// newBenchFixture registers a node and n pending tasks under a group of
// their own.
func newBenchFixture(b *testing.B, s repository.Store, n int) *benchFixture {
	b.Helper()
	ctx := context.Background()
	group := fmt.Sprintf("%s-%d", b.Name(), time.Now().UnixNano())
	node, err := s.RegisterNode(ctx, group, "bench", 1)
	if err != nil {
		b.Fatal(err)
	}
	now, defs := benchDefs(b, s, n)
	tasks, err := s.UpsertTasks(ctx, group, defs)
	if err != nil {
		b.Fatal(err)
	}
	return &benchFixture{s: s, ctx: ctx, node: node.ID, tasks: tasks, base: now.Truncate(time.Second)}
}

// benchDefs returns the database's time and n every-second task
// definitions due then.
func benchDefs(b *testing.B, s repository.Store, n int) (time.Time, []repository.TaskDef) {
	b.Helper()
	now, err := s.Now(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defs := make([]repository.TaskDef, n)
	for i := range defs {
		defs[i] = repository.TaskDef{Name: fmt.Sprintf("t%04d", i), Cron: "* * * * * *", NextStartTime: now}
	}
	return now, defs
}

// claimAll claims every task (all pending) for the node.
func (f *benchFixture) claimAll(b *testing.B) {
	refs := make([]repository.TaskRef, len(f.tasks))
	for i, t := range f.tasks {
		refs[i] = t.Ref()
	}
	won, err := f.s.Claim(f.ctx, f.node, refs)
	if err != nil || len(won) != len(refs) {
		b.Fatalf("claim won %d of %d: %v", len(won), len(refs), err)
	}
	f.tasks = won // ordered by id, like refs
}

// claims returns the fencing tokens of the (claimed) tasks.
func (f *benchFixture) claims() []repository.Claim {
	c := make([]repository.Claim, len(f.tasks))
	for i, t := range f.tasks {
		c[i] = t.Claim()
	}
	return c
}

// releaseAll puts every claimed task back to pending.
func (f *benchFixture) releaseAll(b *testing.B) {
	n, err := f.s.Release(f.ctx, f.claims())
	if err != nil || n != len(f.tasks) {
		b.Fatalf("release %d of %d: %v", n, len(f.tasks), err)
	}
	for i := range f.tasks {
		t := &f.tasks[i]
		t.Status, t.NodeID, t.Version = repository.TaskPending, 0, t.Version+1
	}
}

// startAll starts one execution per claimed task at the next fire time
// and returns their ids.
func (f *benchFixture) startAll(b *testing.B) []int64 {
	f.fires++
	at := f.base.Add(time.Duration(f.fires) * time.Second)
	reqs := make([]repository.ExecStart, len(f.tasks))
	for i, t := range f.tasks {
		reqs[i] = repository.ExecStart{Claim: t.Claim(), Execution: repository.Execution{
			TaskID: t.ID, NodeID: f.node, ScheduledAt: at, Attempt: 1,
		}}
	}
	res, err := f.s.StartExecutions(f.ctx, reqs)
	if err != nil {
		b.Fatalf("start %d executions: %v", len(reqs), err)
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		if r.Err != nil {
			b.Fatalf("start %d: %v", i, r.Err)
		}
		ids[i] = r.Execution.ID
	}
	return ids
}

// finishAll finishes every claimed task's execution execs[i] as succeeded,
// rescheduling it a second later: with keep the claim is kept (doing,
// version+1), else the task goes back to pending. With execs nil each
// finish appends its run (a short run without a start record, the hot
// path).
func (f *benchFixture) finishAll(b *testing.B, execs []int64, keep bool) {
	at := f.base.Add(time.Duration(f.fires) * time.Second)
	next := at.Add(time.Second)
	fs := make([]repository.Finish, len(f.tasks))
	for i, t := range f.tasks {
		fs[i] = repository.Finish{
			Claim: t.Claim(), Revision: t.Revision, Status: repository.ExecSucceeded,
			Next: next, NextAttempt: 1, Cron: t.Cron, Keep: keep,
		}
		if execs == nil {
			fs[i].Run, fs[i].Ran = &repository.Execution{ScheduledAt: at, Attempt: 1}, time.Millisecond
		} else {
			fs[i].ExecutionID = execs[i]
		}
	}
	res, err := f.s.Finish(f.ctx, fs)
	if err != nil {
		b.Fatalf("finish %d: %v", len(fs), err)
	}
	for i, r := range res {
		if r.Err != nil {
			b.Fatalf("finish %d: %v", i, r.Err)
		}
		f.tasks[i] = r.Task
	}
	want := repository.TaskPending
	if keep {
		want = repository.TaskDoing
	}
	if f.tasks[0].Status != want {
		b.Fatalf("finish keep=%v left the task %s, want %s", keep, f.tasks[0].Status, want)
	}
}

// recoverAll resets every claimed task as if its node had died.
func (f *benchFixture) recoverAll(b *testing.B) {
	rs := make([]repository.Recovery, len(f.tasks))
	for i, t := range f.tasks {
		rs[i] = repository.Recovery{Ref: t.Ref(), DeadNode: t.NodeID}
	}
	errs, err := f.s.RecoverAll(f.ctx, rs)
	if err != nil {
		b.Fatalf("recover %d: %v", len(rs), err)
	}
	for i, e := range errs {
		if e != nil {
			b.Fatalf("recover %d: %v", i, e)
		}
		t := &f.tasks[i]
		t.Status, t.NodeID, t.Version = repository.TaskPending, 0, t.Version+1
	}
}

// BenchmarkClaim times the loader's claim of a batch of due tasks (every
// claim wins); the release back to pending is not timed.
func BenchmarkClaim(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		for range b.N {
			f.claimAll(b)
			b.StopTimer()
			f.releaseAll(b)
			b.StartTimer()
		}
	})
}

// BenchmarkRelease times handing a batch of claims back; the claim is
// not timed.
func BenchmarkRelease(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		for range b.N {
			b.StopTimer()
			f.claimAll(b)
			b.StartTimer()
			f.releaseAll(b)
		}
	})
}

// BenchmarkStartExecutions times recording the starts of a batch of fires.
// The tasks stay claimed throughout (a start does not change the task);
// each iteration starts the next fire time, so every row is an insert.
func BenchmarkStartExecutions(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		b.StopTimer()
		f.claimAll(b)
		b.StartTimer()
		for range b.N {
			f.startAll(b)
		}
	})
}

// BenchmarkFinishKeep times the steady-state finish: each execution
// (started untimed) is closed and its task rescheduled with the claim
// kept, so the next iteration finds it doing at the new version.
func BenchmarkFinishKeep(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		b.StopTimer()
		f.claimAll(b)
		for range b.N {
			execs := f.startAll(b)
			b.StartTimer()
			f.finishAll(b, execs, true)
			b.StopTimer()
		}
	})
}

// BenchmarkFinishAppend times the hot path: a finish that keeps its claim
// and appends its short run's history row (no start record); the claim
// is not timed.
func BenchmarkFinishAppend(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		b.StopTimer()
		f.claimAll(b)
		for range b.N {
			f.fires++
			b.StartTimer()
			f.finishAll(b, nil, true)
			b.StopTimer()
		}
	})
}

// BenchmarkFinishRelease times a finish that hands the task back to
// pending (claim not kept); the claim and the start are not timed.
func BenchmarkFinishRelease(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		for range b.N {
			b.StopTimer()
			f.claimAll(b)
			execs := f.startAll(b)
			b.StartTimer()
			f.finishAll(b, execs, false)
		}
	})
}

// BenchmarkRecoverAll times the failover of a batch of orphans: tasks
// claimed (untimed) by a node, reset to pending by RecoverAll. No
// execution is running, so only the task rows are written.
func BenchmarkRecoverAll(b *testing.B) {
	benchBatch(b, func(b *testing.B, f *benchFixture) {
		for range b.N {
			b.StopTimer()
			f.claimAll(b)
			b.StartTimer()
			f.recoverAll(b)
		}
	})
}

// BenchmarkRegisterNew times the registration of a batch of tasks new to
// the group (UpsertTasks inserting every row), as the first replica of a
// fresh deployment does.
func BenchmarkRegisterNew(b *testing.B) {
	s := pgtest.OpenStore(b, pgtest.SharedDatabase(b))
	ctx := context.Background()
	for _, n := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			_, defs := benchDefs(b, s, n)
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.UpsertTasks(ctx, fmt.Sprintf("%s-%d-%d", b.Name(), time.Now().UnixNano(), i), defs); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			rows := float64(b.N * n)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
		})
	}
}

// BenchmarkCreateSchedules times the creation of a batch of runtime
// schedules (CreateSchedules: one insert from arrays), at the batch sizes
// a bulk import sends, without and with an audit entry per row.
func BenchmarkCreateSchedules(b *testing.B) {
	s := pgtest.OpenStore(b, pgtest.SharedDatabase(b))
	for _, audit := range []bool{false, true} {
		ctx := context.Background()
		if audit {
			ctx = repository.WithAudit(ctx, repository.AuditEntry{Actor: repository.Actor{Name: "bench", Via: "client"}})
		}
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("audit=%t/batch=%d", audit, n), func(b *testing.B) {
				now, err := s.Now(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defs := make([]repository.ScheduleDef, n)
				for i := range defs {
					defs[i] = repository.ScheduleDef{
						Name: fmt.Sprintf("s%06d", i), Handler: "mailer", Cron: "*/5 * * * * *",
						Args: fmt.Sprintf(`{"to": "user-%d"}`, i), NextStartTime: now.Add(time.Duration(i) * time.Millisecond),
					}
				}
				b.ResetTimer()
				for i := range b.N {
					if _, err := s.CreateSchedules(ctx, fmt.Sprintf("%s-%d-%d", b.Name(), time.Now().UnixNano(), i), defs); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				rows := float64(b.N * n)
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/rows, "ns/row")
			})
		}
	}
}
