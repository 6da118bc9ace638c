package easyjob

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/runlog"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
)

// Func is a job. It gets a context carrying the execution's metadata
// (InfoFromContext) that is cancelled on timeout, shutdown or a lost claim.
// A returned error or a panic fails the run.
type Func func(ctx context.Context) error

// job adapts fn to the runtime: the run's Info goes into its context
// (one allocation per fire), and a panic becomes a *PanicError.
func job(fn Func) spec.Job {
	return func(ctx context.Context, r spec.Run) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return fn(runContext(ctx, r))
	}
}

// runContext is the job's context of run r: its Info (and transaction)
// in one allocation.
func runContext(ctx context.Context, r spec.Run) context.Context {
	return &infoCtx{Context: ctx, tx: r.Tx, log: r.Log, info: Info{
		Task: r.Task, TaskID: r.TaskID, ScheduledAt: r.ScheduledAt, Attempt: r.Attempt,
		NodeID: r.NodeID, Token: Token{TaskID: r.TaskID, Version: r.Version}, Args: r.Args,
	}}
}

// PanicError is the error a run fails with when its job panics.
type PanicError struct {
	Value any    // what the job panicked with
	Stack []byte // the job's goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("easyjob: job panicked: %v", e.Value) }

// StackTrace returns Stack, for loggers that print an error's stack.
func (e *PanicError) StackTrace() []byte { return e.Stack }

// Info describes the execution a job is running; read it with
// InfoFromContext.
type Info struct {
	Task   string
	TaskID int64
	// ScheduledAt is when this attempt was due (database clock): the cron's
	// fire time for attempt 1 and for a re-run after recovery, the retry
	// time for a retry (Attempt > 1).
	ScheduledAt time.Time
	Attempt     int
	NodeID      int64
	// Token is the fencing token of this run. Use ScheduledAt (with the task
	// name) to make side effects idempotent: a fire interrupted by its
	// node's death runs again on a peer with the same ScheduledAt.
	Token Token
	// Args are the run's JSON arguments (a schedule created at runtime, or
	// a trigger WithArgs); nil when it has none.
	Args json.RawMessage
}

// Token identifies one claim of one task: the task id and the version the
// claim holds. A later claim of the same task always has a larger version.
type Token struct {
	TaskID  int64
	Version int64
}

// String formats the token as "task/version".
func (t Token) String() string { return fmt.Sprintf("%d/%d", t.TaskID, t.Version) }

type infoKey struct{}

// InfoFromContext returns the execution metadata of the running job.
func InfoFromContext(ctx context.Context) (Info, bool) {
	i, ok := ctx.Value(infoKey{}).(*Info)
	if !ok {
		return Info{}, false
	}
	return *i, true
}

// infoCtx carries a run's Info in one allocation per fire (WithValue
// boxed the Info in a second one); Value hands out a pointer to it.
type infoCtx struct {
	context.Context
	info Info
	tx   *sql.Tx // the run's transaction (InTx), nil otherwise
	log  *runlog.Log
	// logger is Logger's, made on its first call: a job that does not
	// log pays nothing for it.
	logger atomic.Pointer[slog.Logger]
}

func (c *infoCtx) Value(key any) any {
	switch key.(type) {
	case infoKey:
		return &c.info
	case txKey:
		return c.tx
	case logKey:
		return c
	}
	return c.Context.Value(key)
}

type txKey struct{}

type logKey struct{}

// Logger returns the running job's logger. Its lines (at
// Config.RunLogLevel and above) are stored with the run, up to
// Config.RunLogLimit, and shown by `easyjob logs` and the dashboard's
// run page, live while the job runs; they also go to the process's log
// (Config.Logger or Config.Slog) with the task's name, when that logs
// their level. Outside a job it returns slog.Default().
func Logger(ctx context.Context) *slog.Logger {
	c, ok := ctx.Value(logKey{}).(*infoCtx)
	if !ok || c.log == nil {
		return slog.Default()
	}
	if l := c.logger.Load(); l != nil {
		return l
	}
	c.logger.CompareAndSwap(nil, runlog.Logger(c.log))
	return c.logger.Load()
}

// Tx returns the transaction of a running job registered with InTx, and
// false for any other job. The job's writes through it commit together
// with the run's fenced finish, or not at all: the fire takes effect
// exactly once. The job must not commit or roll it back itself.
func Tx(ctx context.Context) (*sql.Tx, bool) {
	tx, ok := ctx.Value(txKey{}).(*sql.Tx)
	return tx, ok && tx != nil
}
