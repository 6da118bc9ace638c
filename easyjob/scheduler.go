package easyjob

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// Scheduler holds registered tasks and runs them as one node of its group.
// Register tasks, then call Run once; it blocks until ctx is done.
type Scheduler struct {
	cfg Config

	mu      sync.Mutex
	specs   []*taskSpec
	names   map[string]bool // of specs: a duplicate is found without a scan
	running bool

	health runState // what Health reads (health.go)
}

// New returns a Scheduler for cfg. It checks the configuration (values,
// group name, strategy name) and returns an error wrapping
// ErrInvalidConfig; nothing is opened until Run.
func New(cfg Config) (*Scheduler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, err := strategy.Lookup(cfg.Strategy); err != nil {
		return nil, fmt.Errorf("%w: Strategy: %w (registered: %s)", ErrInvalidConfig, err, strings.Join(strategy.Names(), ", "))
	}
	return &Scheduler{cfg: cfg}, nil
}

// Register adds a task: name (unique in the group), a cron expression
// (5 fields, or 6 with leading seconds; empty for a child that runs after
// every parent success) and the job. Problems with this task alone are
// returned at once and again by Run; problems of the whole forest (unknown
// parent, cycle) are reported by Run before anything is written.
func (s *Scheduler) Register(name, cron string, fn Func, opts ...Option) error {
	return s.add(newTaskSpec(name, cron, fn, opts))
}

// add keeps spec (a task or a handler) for Run, with its first problem.
func (s *Scheduler) add(spec *taskSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return fmt.Errorf("%w: register %q before Run", ErrAlreadyRunning, spec.Name)
	}
	if s.names[spec.Name] && spec.err == nil {
		spec.err = fmt.Errorf("%w: %q registered twice", ErrDuplicateTask, spec.Name)
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[spec.Name] = true
	s.specs = append(s.specs, spec)
	return spec.err
}

// Run validates the registered tasks, opens the store, registers this node
// and runs it until ctx is done, then shuts down gracefully (see Config.
// ShutdownGrace) and returns nil. A registration that is invalid is
// returned at once. A database that does not answer at start (down, not
// yet up, unreachable) is retried with backoff until it answers or ctx is
// done, unless Config.FailFast asks for the error instead; a schema newer
// than this binary or refused credentials are returned at once. Run may
// be called once.
func (s *Scheduler) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return ErrAlreadyRunning
	}
	s.running = true
	specs := s.specs
	s.mu.Unlock()
	defer s.health.ended.Store(true)

	byName, err := validateForest(specs)
	if err != nil {
		return err
	}
	var away startOutage
	for attempt := 1; ; attempt++ {
		err := s.runOnce(ctx, byName, &away)
		if err == nil || s.cfg.FailFast || !retryStart(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("easyjob: stopped before the database answered: %w", err)
		}
		wait := schedule.Backoff(attempt, startRetryBase, startRetryMax)
		away.failed(s.cfg.Logger, err, wait)
		s.health.startErr.Store(&err)
		if !schedule.Sleep(ctx, wait) {
			return fmt.Errorf("easyjob: stopped before the database answered: %w", err)
		}
	}
}

// runOnce opens the store, registers the node and runs it: one attempt
// of Run.
func (s *Scheduler) runOnce(ctx context.Context, byName map[string]*spec.Spec, away *startOutage) error {
	store, closeStore, err := openStore(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	away.answered(s.cfg.Logger)
	rc := s.cfg.runtime()
	rc.Tx, _ = store.(repository.TxFinisher) // before the wrapper, which hides it
	if err := needTx(byName, rc.Tx); err != nil {
		return err
	}
	store = s.wrapStore(store) // call bounds, observer timing, health tracking (health.go)
	n, err := node.New(rc, store, byName)
	if err != nil {
		return err
	}
	s.health.node.Store(n)
	if err := n.Run(ctx); err != nil {
		s.health.node.Store(nil)
		return err
	}
	return nil
}

// needTx refuses InTx tasks on a store without transactions (the
// in-memory one): their writes could not share the finish's.
func needTx(specs map[string]*spec.Spec, tx repository.TxFinisher) error {
	if tx != nil {
		return nil
	}
	for _, sp := range specs {
		if sp.InTx {
			return fmt.Errorf("%w: task %q: InTx needs a PostgreSQL store (Config.DSN, DB or BunDB)", ErrInvalidConfig, sp.Name)
		}
	}
	return nil
}
