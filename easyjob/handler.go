package easyjob

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/easyjob-go/easyjob/easyjob/internal/argschema"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
)

// Handler is the code behind the schedules created at runtime that name
// its kind (Handle, Client.Create): each of their fires calls it with the
// schedule's arguments. Make one with HandlerOf.
type Handler struct {
	job         spec.Job
	schema      string
	fingerprint string
}

// HandlerOf adapts fn into a Handler. Each run's JSON arguments are
// decoded into a new A (unknown fields refused) before fn is called; a run
// whose arguments do not decode fails without calling fn, with an error
// that names the field. The run's Info is in ctx, as for a Func.
//
// The JSON schema of A is published with the handler's kind, so that
// Client.Create (and the CLI and dashboard) refuse such arguments before
// anything is written.
func HandlerOf[A any](fn func(ctx context.Context, args A) error) Handler {
	if fn == nil {
		return Handler{}
	}
	schema, _ := json.Marshal(argschema.For[A]()) // a Schema always marshals
	return Handler{job: handlerJob(fn), schema: string(schema), fingerprint: fingerprint(fn)}
}

// handlerJob adapts fn to the runtime, as job does for a Func.
func handlerJob[A any](fn func(context.Context, A) error) spec.Job {
	return func(ctx context.Context, r spec.Run) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		var args A
		if len(r.Args) > 0 {
			if err := argschema.Decode(r.Args, &args); err != nil {
				return fmt.Errorf("easyjob: arguments of %q do not decode into %s: %w", r.Task, reflect.TypeFor[A](), err)
			}
		}
		return fn(runContext(ctx, r), args)
	}
}

// Handle registers a handler kind on the default scheduler; see
// Scheduler.Handle.
func Handle[A any](kind string, fn func(ctx context.Context, args A) error) error {
	h := HandlerOf(fn)
	err := newHandlerSpec(kind, h).err
	defaultMu.Lock()
	defer defaultMu.Unlock()
	defaultTasks = append(defaultTasks, func(s *Scheduler) error { return s.Handle(kind, h) })
	return err
}

// Handle registers h under kind: the schedules created at runtime with
// that handler kind (Client.Create) run it, on the nodes that register it.
// A kind shares the namespace of task names: Register and Handle of one
// name collide (ErrDuplicateTask). A handler has no schedule of its own.
func (s *Scheduler) Handle(kind string, h Handler) error {
	return s.add(newHandlerSpec(kind, h))
}

func newHandlerSpec(kind string, h Handler) *taskSpec {
	s := &taskSpec{Spec: spec.Spec{Name: kind, Handler: true, Job: h.job, ArgsSchema: h.schema, Fingerprint: h.fingerprint}}
	if s.err = checkName("handler kind", kind); s.err == nil && h.job == nil {
		s.err = fmt.Errorf("%w: handler %q", ErrNilFunc, kind)
	}
	return s
}
