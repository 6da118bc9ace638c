package easyjob

import (
	"context"
	"sync"
)

// The default scheduler behind the package-level Register and Run, in the
// manner of http.HandleFunc: the one piece of global mutable state here.
var (
	defaultMu    sync.Mutex
	defaultTasks []func(*Scheduler) error
)

// Register adds a task to the default scheduler; see Scheduler.Register.
func Register(name, cron string, fn Func, opts ...Option) error {
	spec := newTaskSpec(name, cron, fn, opts)
	defaultMu.Lock()
	defer defaultMu.Unlock()
	defaultTasks = append(defaultTasks, func(s *Scheduler) error {
		return s.Register(name, cron, fn, opts...)
	})
	return spec.err
}

// Run runs the tasks registered with the package-level Register as one
// node configured by cfg; see Scheduler.Run.
func Run(ctx context.Context, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	defaultMu.Lock()
	regs := defaultTasks
	defaultMu.Unlock()
	for _, r := range regs {
		_ = r(s) // errors are kept in the spec and reported by Run
	}
	return s.Run(ctx)
}
