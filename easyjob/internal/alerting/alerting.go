// Package alerting evaluates a group's alert rules on a node and delivers
// the alerts this node won (easyjob/alert documents what users see). The
// node tells it what it sees anyway, off its fire path: the rows its
// finishes wrote (Finished), the fires it starts (Started), the misfires
// it applies (Misfired). Each call costs an atomic load and a map lookup
// when no rule watches the task, and a non-blocking channel send when
// one does and something happened. One goroutine (Run) turns those into
// alert events in the store, which deduplicates them across the group;
// every Interval it reads the rules and the group's live events, takes
// over the deliveries of dead owners and, on the lowest live node only,
// checks what no single fire shows: dead-man silences, dead nodes, tasks
// no live node registers, and the resolutions of failure streaks. A
// second goroutine delivers, so a slow receiver never holds evaluation.
package alerting

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// Store is what the alerting service reads and writes.
type Store interface {
	repository.AlertStore
	repository.NodeReader
	RegisteredTasks(ctx context.Context, group string) ([]repository.Task, error)
	Tasks(ctx context.Context, group string) ([]repository.Task, error)
	History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error)
}

// Config configures a Service.
type Config struct {
	Group string
	// Rules are the rules in code (easyjob.Config.Alerts), normalized.
	Rules []alert.Rule
	// Notifiers deliver the events of rules without notifiers of their
	// own (easyjob.Config.AlertNotifiers).
	Notifiers []alert.Notifier
	// Interval is how often the rules and live events are read.
	Interval time.Duration
	// Retention: resolved, delivered alerts older than this are deleted
	// (by the lowest live node, every pruneEvery intervals); 0 keeps them.
	Retention            time.Duration
	LiveAfter, DeadAfter time.Duration
	Logger               zerolog.Logger
}

// Node is what the service asks of its node.
type Node interface {
	ID() repository.NodeID
	// Live is the node's last view of the group's live nodes, by id.
	Live() []repository.Node
	// Now estimates the database's clock.
	Now() time.Time
}

// Service is one node's alerting.
type Service struct {
	cfg   Config
	store Store
	log   zerolog.Logger
	node  Node

	idx atomic.Pointer[index] // what the node's calls consult
	in  chan observation      // from the node's calls to Run
	out chan repository.AlertEvent

	dropped atomic.Int64

	// Owned by Run's loop:
	ticks      int
	groupTicks int                  // passes that ran the group checks
	lastGood   map[string]time.Time // deadman: a task's last success, by name
	lastSeen   map[string]time.Time // deadman: the LastFinishedAt lastGood was read at
	deliverMu  sync.Mutex
	inflight   map[int64]bool      // queued or being delivered
	retryAt    map[int64]time.Time // failed deliveries wait until then
	done       map[doneKey]bool    // notifiers that got a notification already
	gaveUp     map[int64]bool
}

type doneKey struct {
	id       int64
	resolved bool
	i        int
}

// New returns the alerting of cfg's group over store.
func New(cfg Config, store Store) *Service {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	s := &Service{
		cfg: cfg, store: store, log: cfg.Logger,
		in:       make(chan observation, 1024),
		out:      make(chan repository.AlertEvent, 256),
		lastGood: map[string]time.Time{}, lastSeen: map[string]time.Time{},
		inflight: map[int64]bool{}, retryAt: map[int64]time.Time{}, done: map[doneKey]bool{}, gaveUp: map[int64]bool{},
	}
	s.idx.Store(buildIndex(cfg.Rules, nil, nil, cfg.Notifiers))
	return s
}

// Run evaluates and delivers until ctx is done; its goroutines have
// ended when it returns.
func (s *Service) Run(ctx context.Context, n Node) {
	s.node = n
	var wg sync.WaitGroup
	wg.Go(func() { s.deliverLoop(ctx) })
	defer wg.Wait()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	s.tick(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-s.in:
			s.handle(ctx, o)
		case <-t.C:
			s.tick(ctx)
		}
	}
}

// observation is what a node call reports.
type observation struct {
	kind      obsKind
	task      string
	scheduled time.Time
	lag       time.Duration
	misfire   repository.MisfireAction // obsMisfired: the action applied
	late      bool                     // obsStarted: its misfire policy applied
	row       repository.Task          // obsFinished: the row as written
}

type obsKind uint8

const (
	obsFinished obsKind = iota + 1
	obsStarted
	obsMisfired
)

// send hands o to Run without blocking; a full queue drops it (counted).
func (s *Service) send(o observation) {
	select {
	case s.in <- o:
	default:
		if s.dropped.Add(1)%1000 == 1 {
			s.log.Warn().Str("task", o.task).Msg("easyjob: alert queue full: an observation was dropped")
		}
	}
}

// Finished reports the row a finish of this node wrote for the fire at
// scheduled: failures open Failure and ConsecutiveFailures alerts, a
// success resolves them (and a dead-man alert).
func (s *Service) Finished(row repository.Task, scheduled time.Time) {
	idx := s.idx.Load()
	rules := idx.rulesOf(row.Name)
	if len(rules) == 0 {
		return
	}
	failed := row.LastStatus == repository.ExecFailed || row.LastStatus == repository.ExecTimedOut
	ok := row.LastStatus == repository.ExecSucceeded
	for _, r := range rules {
		opens := false
		switch r.Kind {
		case alert.Failure:
			opens = failed
		case alert.ConsecutiveFailures:
			opens = failed && row.Failures >= r.Count
		case alert.Deadman:
		default:
			continue
		}
		if opens || (ok && idx.isOpen(r.Name, row.Name)) {
			s.send(observation{kind: obsFinished, task: row.Name, scheduled: scheduled, row: row})
			return
		}
	}
}

// Started reports a fire this node started lag after its time; misfire
// says its misfire policy applied. Late fires open Late alerts, fires on
// time resolve Late and Missed ones.
func (s *Service) Started(task string, scheduled time.Time, lag time.Duration, misfire bool) {
	idx := s.idx.Load()
	rules := idx.rulesOf(task)
	if len(rules) == 0 {
		return
	}
	for _, r := range rules {
		switch {
		case r.Kind == alert.Late && lag > r.After:
		case r.Kind == alert.Late || (r.Kind == alert.Missed && !misfire):
			if !idx.isOpen(r.Name, task) {
				continue
			}
		default:
			continue
		}
		s.send(observation{kind: obsStarted, task: task, scheduled: scheduled, lag: lag, late: misfire})
		return
	}
}

// Misfired reports a fire found late past its misfire threshold, and
// the action its misfire policy applied.
func (s *Service) Misfired(task string, scheduled time.Time, action repository.MisfireAction, lag time.Duration) {
	for _, r := range s.idx.Load().rulesOf(task) {
		if r.Kind == alert.Missed {
			s.send(observation{kind: obsMisfired, task: task, scheduled: scheduled, lag: lag, misfire: action})
			return
		}
	}
}
