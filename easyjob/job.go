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
	"github.com/easyjob-go/easyjob/repository"
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
	return &infoCtx{Context: ctx, tx: r.Tx, log: r.Log, result: r.Result, parents: r.ParentResults, info: Info{
		Task: r.Task, TaskID: r.TaskID, ScheduledAt: r.ScheduledAt, Attempt: r.Attempt,
		NodeID: r.NodeID, Token: Token{TaskID: r.TaskID, Version: r.Version}, Args: r.Args,
		Shard: r.Shard, Shards: r.Shards,
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
	// Shard is the run's shard (0..Shards-1) and Shards their number, for
	// a task split with Shards; both 0 otherwise.
	Shard, Shards int
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
	// result receives SetResult's value (nil: no step follows the task);
	// parents reads a DAG step's parents' results (nil: not a step).
	result  *[]byte
	parents func(context.Context) (map[string]string, error)
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

// SetResult hands v, encoded as JSON (at most 64 KiB), to the DAG steps
// after the running task (Parents): each reads it with ParentResults.
// The result is stored with the run when the job succeeds; a job that
// fails hands nothing on. Outside a run, or when no step follows the
// task, it keeps nothing and returns nil.
func SetResult(ctx context.Context, v any) error {
	c, ok := ctx.Value(logKey{}).(*infoCtx)
	if !ok || c.result == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: result of %q: %w", ErrInvalidArgs, c.info.Task, err)
	}
	if len(b) > repository.MaxResultBytes {
		return fmt.Errorf("%w: result of %q is %d bytes (at most %d)", ErrInvalidArgs, c.info.Task, len(b), repository.MaxResultBytes)
	}
	*c.result = b
	return nil
}

// ParentResults returns the results (SetResult) of the parent runs a DAG
// step's run follows, by parent name (a shard of a sharded parent as
// "name[i]"); a parent that set none has no entry. It reads them from
// the store, so each call is a round trip. Outside a DAG step's run it
// returns an empty map.
func ParentResults(ctx context.Context) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	c, ok := ctx.Value(logKey{}).(*infoCtx)
	if !ok || c.parents == nil {
		return out, nil
	}
	res, err := c.parents(ctx)
	if err != nil {
		return nil, fmt.Errorf("easyjob: results of the parents of %q: %w", c.info.Task, err)
	}
	for name, r := range res {
		if r != "" {
			out[name] = json.RawMessage(r)
		}
	}
	return out, nil
}
