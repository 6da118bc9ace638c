package harness

import (
	"context"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// fire is one run of a bench job as the ledger saw it.
type fire struct {
	Task    string
	Sched   int64 // scheduled time (the fire time, database clock), unix nanos
	Node    int64 // node id (database)
	Start   int64 // when the job started (local clock), unix nanos
	Attempt int
	Exec    int64 // execution id; 0 while easyjob.Info does not carry it
	Version int64 // fencing token version (Info.Token.Version): a re-run of a fire has a larger one
	Proc    int   // which process incarnation wrote it (index into the run's list); 0 in-process
	End     int64 // when the job returned (local clock), unix nanos; 0 when recorded as it started
}

// Lag is the start lag versus the scheduled time.
func (f fire) Lag() time.Duration { return time.Duration(f.Start - f.Sched) }

// ledger records fires. It never touches the scheduler's database.
type ledger interface {
	record(f fire)
}

// fireFromContext builds the ledger entry of the running job.
func fireFromContext(ctx context.Context) fire {
	start := time.Now().UnixNano()
	info, _ := easyjob.InfoFromContext(ctx)
	return fire{
		Task: info.Task, Sched: info.ScheduledAt.UnixNano(), Node: info.NodeID,
		Start: start, Attempt: info.Attempt, Version: info.Token.Version,
	}
}

// ledgerJob is the near-instant job of every bench task: it records the fire.
func ledgerJob(l ledger) easyjob.Func {
	return func(ctx context.Context) error {
		l.record(fireFromContext(ctx))
		return nil
	}
}

// ledgerHandler is the near-instant handler of the runtime schedules of
// bench --schedules: it records the fire (its task is the schedule's name)
// and ignores the arguments.
func ledgerHandler(l ledger) func(context.Context, benchArgs) error {
	return func(ctx context.Context, _ benchArgs) error {
		l.record(fireFromContext(ctx))
		return nil
	}
}

// memLedger keeps fires in memory (in-process nodes).
type memLedger struct {
	mu    sync.Mutex
	fires []fire
}

func (m *memLedger) record(f fire) {
	m.mu.Lock()
	m.fires = append(m.fires, f)
	m.mu.Unlock()
}

func (m *memLedger) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.fires)
}

func (m *memLedger) snapshot() []fire {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]fire(nil), m.fires...)
}
