package easyjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// node is one running Scheduler: the state its loops share.
type node struct {
	cfg   Config
	store repository.Store
	log   zerolog.Logger
	strat strategy.Strategy
	specs map[string]*taskSpec
	roots []string // names the loader asks for

	self   repository.NodeID
	offset clockOffset
	counts recentCounter // executions finished in the last minute, for least_count
	beats  atomic.Int64

	recoverPasses  int // owned by the recover loop
	reconcileTicks int // owned by the reconcile loop

	live     atomic.Pointer[[]repository.Node] // last live view, sorted by id
	lastBeat atomic.Int64                      // unix nanos (local) when the last good heartbeat was sent
	stopping atomic.Bool                       // shutdown began: claim nothing more, keep nothing
	idle     atomic.Bool                       // the last loader pass found nothing due
	dirty    atomic.Bool                       // a claim-related write failed: reconcile soon
	// epoch counts the silences past the dead threshold this node noticed.
	// Each claim carries the epoch it was taken in; one from an older epoch
	// never fires (peers may have recovered it meanwhile).
	epoch   atomic.Int64
	bg      context.Context // lives until the final clean-up; for store writes
	runBase context.Context // parent of job contexts; values of Run's ctx, no cancel
	wake    chan struct{}   // pokes the loader

	// claimMu orders claims against reconcile: claimers hold it shared from
	// the claim statement until the claim is in held; reconcile holds it
	// exclusively so it never releases a claim that is about to be held.
	claimMu sync.RWMutex

	mu       sync.Mutex
	held     map[repository.TaskID]*claimed
	children map[string]repository.Task // last known rows of child tasks

	queue     *delayQueue
	pool      *pool
	starter   *starter
	completer *completer
	stats     stats
	hooks     *testHooks
}

// stats are counters for status output and the bench harness.
type stats struct {
	claimed, conflicts, fired, fenced, released atomic.Int64
	handedOff                                   atomic.Int64 // claims given up by a finish for a peer
}

func newNode(cfg Config, store repository.Store, specs map[string]*taskSpec) (*node, error) {
	strat, err := strategy.Lookup(cfg.Strategy)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	n := &node{
		cfg:      cfg,
		store:    store,
		log:      cfg.Logger.With().Str("group", cfg.Group).Logger(),
		strat:    strat,
		specs:    specs,
		wake:     make(chan struct{}, 1),
		held:     map[repository.TaskID]*claimed{},
		children: map[string]repository.Task{},
		queue:    newDelayQueue(),
		hooks:    cfg.hooks,
	}
	for name, s := range specs {
		if s.parent == "" {
			n.roots = append(n.roots, name)
		}
	}
	slices.Sort(n.roots)
	n.pool = newPool(n, cfg.Workers)
	n.starter = newStarter(n)
	n.completer = newCompleter(store, n.log)
	return n, nil
}

// dbNow estimates the database's clock.
func (n *node) dbNow() time.Time { return time.Now().Add(n.offset.get()) }

// toLocal converts a database time to the local clock.
func (n *node) toLocal(t time.Time) time.Time { return t.Add(-n.offset.get()) }

// poke wakes the loader.
func (n *node) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// suspect reports that this node has not heartbeated for so long that
// peers may already consider it dead: it must not start or claim anything.
// The margin of half a heartbeat keeps it on the safe side of the peers'
// dead threshold.
func (n *node) suspect() bool {
	last := n.lastBeat.Load()
	if last == 0 {
		return false
	}
	return time.Since(time.Unix(0, last)) > n.cfg.DeadAfter-n.cfg.HeartbeatInterval/2
}

// strategyView returns the live view with this node's own counts taken
// fresh from memory: peers' counts are a heartbeat old, but a node's own
// need not be, and a stale own count makes least_count overshoot.
func (n *node) strategyView(live []repository.Node) []repository.Node {
	if n.cfg.Strategy != strategy.NameLeastCount {
		return live
	}
	out := append([]repository.Node(nil), live...)
	for i := range out {
		if out[i].ID == n.self {
			out[i].Counts = n.counts.sum(time.Now())
		}
	}
	return out
}

// liveView returns the last live node set seen.
func (n *node) liveView() []repository.Node {
	if p := n.live.Load(); p != nil {
		return *p
	}
	return nil
}

// run registers the node and its tasks, runs the loops until ctx is done,
// then shuts down in order (see shutdown).
func (n *node) run(ctx context.Context) error {
	if err := n.register(ctx); err != nil {
		return err
	}
	n.log = n.log.With().Int64("node", int64(n.self)).Logger()
	n.log.Info().Str("name", n.cfg.NodeName).Str("strategy", n.cfg.Strategy).Int("tasks", len(n.specs)).Msg("easyjob: node started")

	// Loops that keep the node alive stop last; loops that take new work stop first.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	n.bg, n.runBase = bg, context.WithoutCancel(ctx)
	var bgWG, workWG sync.WaitGroup
	bgWG.Go(func() { n.completer.run(bg) })
	bgWG.Go(func() { n.starter.run(bg) })
	bgWG.Go(func() { loop(bg, n.log, "heartbeat", n.cfg.HeartbeatInterval, nil, n.heartbeat) })
	bgWG.Go(func() { n.watchSilence(bg) })

	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	workWG.Go(func() { loopEvery(work, n.log, "loader", n.loadEvery, n.wake, n.load) })
	workWG.Go(func() { loop(work, n.log, "recover", n.cfg.RecoverInterval, nil, n.recoverOrphans) })
	workWG.Go(func() { loop(work, n.log, "housekeep", housekeepInterval, nil, n.housekeep) })
	workWG.Go(func() { loop(work, n.log, "reconcile", n.cfg.HeartbeatInterval, nil, n.reconcileStep) })
	workWG.Go(func() { n.boss(work) })
	if l, ok := n.store.(repository.Notifier); ok {
		workWG.Go(func() { n.listen(work, l) })
	}
	if n.hooks != nil && n.hooks.onNode != nil {
		n.hooks.onNode(n)
	}

	<-ctx.Done()
	if n.hooks != nil && n.hooks.crashed.Load() {
		// Simulated crash: stop every loop and clean nothing up. The boss
		// stops first (no new fire), then the writers (running jobs'
		// results are lost), then the jobs are cancelled.
		stopWork()
		workWG.Wait()
		stopBG()
		bgWG.Wait()
		n.pool.cancelAll()
		n.pool.wait()
		return nil
	}
	n.shutdown(&workWG, func() { stopBG(); bgWG.Wait() })
	return nil
}

// register writes the task forest and the node row.
func (n *node) register(ctx context.Context) error {
	t0 := time.Now()
	now, err := n.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("easyjob: read database clock: %w", err)
	}
	n.offset.observe(t0, time.Now(), now)
	defs := make([]repository.TaskDef, 0, len(n.specs))
	for _, s := range orderedSpecs(n.specs) {
		d := repository.TaskDef{Name: s.name, Cron: s.cron, Parent: s.parent, Options: s.opts}
		if next, ok := s.sched.next(now); ok {
			d.NextStartTime = next
		} else {
			d.NextStartTime, d.Finished = now, !s.sched.empty()
		}
		defs = append(defs, d)
	}
	rows, err := n.store.UpsertTasks(ctx, n.cfg.Group, defs)
	if err != nil {
		return fmt.Errorf("easyjob: register tasks: %w", err)
	}
	for _, r := range rows {
		if r.ParentID != 0 {
			n.children[r.Name] = r
		}
	}
	node, err := n.store.RegisterNode(ctx, n.cfg.Group, n.cfg.NodeName, n.cfg.Weight)
	if err != nil {
		return fmt.Errorf("easyjob: register node: %w", err)
	}
	n.self = node.ID
	n.lastBeat.Store(t0.UnixNano())
	return nil
}

// orderedSpecs lists specs parents first, then by name, so the upsert can
// resolve parents and output is deterministic.
func orderedSpecs(specs map[string]*taskSpec) []*taskSpec {
	var out []*taskSpec
	var visit func(s *taskSpec)
	visit = func(s *taskSpec) {
		out = append(out, s)
		for _, c := range s.children {
			visit(c)
		}
	}
	names := make([]string, 0, len(specs))
	for name, s := range specs {
		if s.parent == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		visit(specs[name])
	}
	return out
}

// setLive stores a new live view.
func (n *node) setLive(live []repository.Node) { n.live.Store(&live) }

// hold records claims won by this node and queues them.
func (n *node) hold(rows []repository.Task) {
	for _, t := range rows {
		spec := n.specs[t.Name]
		if spec == nil {
			continue // cannot happen: we only ask for names we have
		}
		c := &claimed{task: t, spec: spec, index: -1, localAt: n.toLocal(t.NextStartTime), epoch: n.epoch.Load()}
		n.mu.Lock()
		n.held[t.ID] = c
		n.mu.Unlock()
		n.queue.push(c)
	}
}

// forget drops a claim from memory (after a finish, a release or a loss).
func (n *node) forget(c *claimed) {
	n.mu.Lock()
	if n.held[c.task.ID] == c {
		delete(n.held, c.task.ID)
	}
	n.mu.Unlock()
}

// isHeld reports whether c is still this node's current claim of its
// task, taken since the node's last silence.
func (n *node) isHeld(c *claimed) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.held[c.task.ID] == c && c.epoch == n.epoch.Load()
}

func (n *node) heldCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.held)
}

// release gives claims back to pending so peers can take them.
func (n *node) release(ctx context.Context, cs []*claimed, why string) {
	if len(cs) == 0 {
		return
	}
	fences := make([]repository.Claim, 0, len(cs))
	for _, c := range cs {
		n.forget(c)
		fences = append(fences, c.task.Claim())
	}
	k, err := n.store.Release(ctx, fences)
	n.stats.released.Add(int64(k))
	if err != nil {
		n.dirty.Store(true)
		// Not fatal: reconcile or recovery returns them later.
		n.log.Warn().Err(err).Int("claims", len(cs)).Str("why", why).Msg("easyjob: release failed")
		return
	}
	n.log.Debug().Int("claims", k).Str("why", why).Msg("easyjob: released claims")
}

var errStopped = errors.New("easyjob: node stopping")
