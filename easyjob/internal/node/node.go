package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/internal/alerting"
	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/dispatch"
	"github.com/easyjob-go/easyjob/easyjob/internal/runlog"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// Node is one running node of a group: the state its loops share. Each
// loop lives in the file named after it. A fire's life: boss.go fires the
// claim (internal/claim) from the delay queue into the worker pool
// (internal/dispatch); worker.go runs it (and chain.go its children) and
// hands its finish over (finish.go), which the completer writes in a
// batch (completer.go); the claim set settles it (internal/claim:
// Set.Settle: the written row confirms the claim's next fire, or ends
// it) and finish.go acts on that.
type Node struct {
	cfg   Config
	store repository.Runtime
	log   zerolog.Logger
	specs map[string]*spec.Spec
	roots []string // names the loader asks for
	// broadcasts are the broadcast tasks (TaskOptions.Broadcast): never
	// claimed, each fired by every node on its own (broadcast.go).
	broadcasts []*spec.Spec

	picker   *picker    // strategy over the live view; holds self, the node id
	claims   *claim.Set // claims held and their epoch
	children childRows  // last known rows of child tasks
	dag      dagSteps   // DAG steps to make due (dag.go)

	offset clockOffset
	counts recentCounter // executions finished in the last 10 complete seconds, for strategies that read counts
	beats  atomic.Int64

	recoverPasses  int       // owned by the recover loop
	reconcileTicks int       // owned by the reconcile loop
	crowdedWarned  time.Time // owned by the loader loop
	clockWarned    time.Time // owned by the recover loop

	lastBeat     atomic.Int64    // unix nanos (local) when the last good heartbeat was sent
	silentBy     atomic.Int64    // mono nanos from which the node is suspect unless it beats again; 0 before the first beat
	unseenBy     atomic.Int64    // mono nanos from which peers see the node as not live (LiveAfter) unless it beats again; 0 before the first beat
	seenSince    atomic.Int64    // unix nanos (local) since when heartbeats succeed without a gap; 0 after a failure
	stopping     atomic.Bool     // shutdown began: claim nothing more, keep nothing
	idle         atomic.Bool     // the last loader pass found nothing due
	crowded      atomic.Bool     // every claim taken while a due task waits too long: keep none (crowded.go)
	dirty        atomic.Bool     // a claim-related write failed: reconcile soon
	bg           context.Context // lives until the final clean-up; for store writes
	wake         chan struct{}   // pokes the loader
	reconcileNow chan struct{}   // pokes the reconcile loop (a silence ended)

	queue     *dispatch.DelayQueue
	handovers *dispatch.DelayQueue // tasks handed to peers, until shortly before their fire (handover.go)
	pool      *dispatch.Pool
	starter   *starter
	completer *completer
	outage    *outage // keeps a database outage to a few log lines
	collector *burstCollector

	cals       calendars                              // the group's exclusion calendars (calendars.go)
	cancels    cancelReader                           // operators' cancel requests (cancel.go); owned by its loop
	runLogs    runLogs                                // logs of running jobs (runlogs.go)
	joinRunLog func(*runlog.Log)                      // runLogs.join, bound once
	collisions atomic.Pointer[[]repository.Collision] // the last checkCollisions found
	stats      stats
	hooks      *Hooks
	obs        observe.Observer  // Config.Observer; nil when nothing observes
	alerts     *alerting.Service // nil without alerts (alerts.go)
}

// New returns a node of cfg's group over store that runs specs (by
// name, linked into their forest); Run runs it.
func New(cfg Config, store repository.Runtime, specs map[string]*spec.Spec) (*Node, error) {
	strat, err := strategy.Lookup(cfg.Strategy)
	if err != nil {
		return nil, fmt.Errorf("easyjob: strategy: %w", err)
	}
	n := &Node{
		cfg:          cfg,
		store:        store,
		log:          cfg.Logger.With().Str("group", cfg.Group).Logger(),
		specs:        specs,
		claims:       claim.NewSet(),
		wake:         make(chan struct{}, 1),
		dag:          dagSteps{wake: make(chan struct{}, 1), pending: map[string]bool{}},
		reconcileNow: make(chan struct{}, 1),
		queue:        dispatch.NewDelayQueue(),
		handovers:    dispatch.NewDelayQueue(),
		collector:    newBurstCollector(burstCollectMin),
		hooks:        cfg.Hooks,
		obs:          cfg.Observer,
	}
	n.joinRunLog = n.runLogs.join
	scheds := make([]*schedule.Schedule, 0, len(specs))
	for _, s := range specs {
		scheds = append(scheds, &s.Sched)
		if s.Handler {
			s.Scheds = schedule.NewCache(maxRowScheds)
		}
	}
	schedule.ShareTicks(scheds)
	n.picker = newPicker(strat, cfg.StealAfter, &n.counts)
	for name, s := range specs {
		switch {
		case s.Opts.Broadcast && !s.Handler:
			n.broadcasts = append(n.broadcasts, s)
		case s.Parent == "": // a root task, or a handler kind (the runtime schedules that name it)
			n.roots = append(n.roots, name)
		}
	}
	slices.Sort(n.roots)
	slices.SortFunc(n.broadcasts, func(a, b *spec.Spec) int { return strings.Compare(a.Name, b.Name) })
	n.outage = newOutage(n.log)
	n.completer = newCompleter(store, n.outage, n.claims.Hold)
	n.alerts = newAlerts(cfg, n.log, store)
	return n, nil
}

// dbNow estimates the database's clock.
func (n *Node) dbNow() time.Time { return time.Now().Add(n.offset.get()) }

// toLocal converts a database time to the local clock.
func (n *Node) toLocal(t time.Time) time.Time { return t.Add(-n.offset.get()) }

// poke wakes the loader.
func (n *Node) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// suspect reports that this node has not heartbeated for so long that
// peers may already consider it dead: it must not start or claim anything.
// The margin of half a heartbeat keeps it on the safe side of the peers'
// dead threshold.
func (n *Node) suspect() bool { return n.suspectAt(mono()) }

// suspectAt is suspect as of now, a mono reading.
func (n *Node) suspectAt(now time.Duration) bool {
	by := n.silentBy.Load()
	return by != 0 && now > time.Duration(by)
}

// beat records a good heartbeat sent at local time sent.
func (n *Node) beat(sent time.Time) {
	n.lastBeat.Store(sent.UnixNano())
	n.silentBy.Store(int64(monoAt(sent) + n.cfg.DeadAfter - n.cfg.HeartbeatInterval/2))
	n.unseenBy.Store(int64(monoAt(sent) + n.cfg.LiveAfter))
}

// silentAt is the local time from which the node is suspect unless it
// heartbeats again first.
func (n *Node) silentAt() (time.Time, bool) {
	last := n.lastBeat.Load()
	if last == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, last).Add(n.cfg.DeadAfter - n.cfg.HeartbeatInterval/2), true
}

// Run registers the node and its tasks, runs the loops until ctx is done,
// then shuts down in order (see shutdown) and returns nil. It returns an
// error when the registration fails. Run may be called once.
func (n *Node) Run(ctx context.Context) error {
	if err := n.register(ctx); err != nil {
		return err
	}
	n.log = n.log.With().Int64("node", int64(n.id())).Logger()
	n.outage.log = n.log // before any loop starts
	n.log.Info().Str("name", n.cfg.NodeName).Str("strategy", n.cfg.Strategy).Int("tasks", len(n.specs)).Msg("easyjob: node started")

	// Loops that keep the node alive stop last; loops that take new work stop first.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	n.bg = bg
	// Job contexts keep Run's values but not its cancel: shutdown cancels
	// them itself, after the grace period.
	n.pool = dispatch.NewPool(context.WithoutCancel(ctx), n.cfg.Workers, n.run)
	n.starter = newStarter(n.store, n.outage, n.pool, &n.stats, func() { n.dirty.Store(true) })
	var bgWG, workWG sync.WaitGroup
	bgWG.Go(func() { n.completer.run(bg, func(ctx context.Context) { n.pool.WaitSettled(ctx, maxStartDefer) }) })
	bgWG.Go(func() { n.starter.run(bg) })
	bgWG.Go(func() { loop(bg, n.outage, "heartbeat", n.cfg.HeartbeatInterval, nil, n.heartbeat) })
	bgWG.Go(func() { n.watchSilence(bg) })
	bgWG.Go(func() { loop(bg, n.outage, "run logs", runLogFlush, nil, n.flushRunLogs) })

	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	workWG.Go(func() { loopEvery(work, n.outage, "loader", n.loadEvery, n.wake, n.load) })
	workWG.Go(func() { loop(work, n.outage, "recover", n.cfg.RecoverInterval, nil, n.recoverOrphans) })
	workWG.Go(func() { loopEvery(work, n.outage, "housekeep", n.housekeepEvery, nil, n.housekeep) })
	workWG.Go(func() { loop(work, n.outage, "reconcile", n.cfg.HeartbeatInterval, n.reconcileNow, n.reconcileStep) })
	workWG.Go(func() { n.boss(work) })
	workWG.Go(func() { n.collector.run(work) })
	workWG.Go(func() { n.watchHandovers(work) })
	workWG.Go(func() { loop(work, n.outage, "cancels", n.cfg.HeartbeatInterval, nil, n.readCancels) })
	if len(n.broadcasts) > 0 {
		workWG.Go(func() { n.runBroadcasts(work) })
	}
	if n.hasSteps() {
		workWG.Go(func() { loop(work, n.outage, "DAG steps", dagSweep, n.dag.wake, n.advanceSteps) })
	}
	if n.alerts != nil {
		workWG.Go(func() { n.alerts.Run(work, alertView{n}) })
	}
	if l, ok := n.store.(repository.Notifier); ok {
		workWG.Go(func() { n.listen(work, l) })
	}
	if n.hooks != nil && n.hooks.OnNode != nil {
		n.hooks.OnNode(n)
	}

	<-ctx.Done()
	if n.hooks != nil && n.hooks.Crashed.Load() {
		// Simulated crash: stop every loop and clean nothing up. The boss
		// stops first (no new fire), then the writers (running jobs'
		// results are lost), then the jobs are cancelled.
		stopWork()
		workWG.Wait()
		stopBG()
		bgWG.Wait()
		n.pool.CancelAll()
		n.pool.Wait()
		n.pool.Close()
		n.pool.WaitWorkers()
		return nil
	}
	n.shutdown(&workWG, func() { stopBG(); bgWG.Wait() })
	return nil
}

// registerLead is how long registering n tasks and claiming their first
// fires is expected to take: a task new to the group (or whose cron
// changed) fires first at its first cron time after that, not after the
// registration began. With thousands of tasks the rows are written and
// claimed over about a second (BenchmarkRegisterNew, BenchmarkClaim): a
// first fire planned from the start was late before it was claimed, and
// every-second tasks then caught up for seconds. A few tasks wait for no
// lead worth the name (100 tasks: 15 ms).
func registerLead(n int) time.Duration {
	return min(time.Duration(n)*RegisterLeadPerTask, maxRegisterLead)
}

// maxRowScheds bounds the distinct crons a handler's cache keeps.
const maxRowScheds = 4096

const (
	// RegisterLeadPerTask is the lead per task registered (registerLead).
	RegisterLeadPerTask = 150 * time.Microsecond
	maxRegisterLead     = 3 * time.Second
)

// register writes the task forest and the node row.
func (n *Node) register(ctx context.Context) error {
	t0 := time.Now()
	now, err := n.store.Now(ctx)
	if err != nil {
		return fmt.Errorf("easyjob: read database clock: %w", err)
	}
	n.offset.observe(t0, time.Now(), now)
	ready := now.Add(registerLead(len(n.specs)))
	defs := make([]repository.TaskDef, 0, len(n.specs))
	for _, s := range orderedSpecs(n.specs) {
		if s.Handler {
			continue // no row of its own: published below
		}
		d := repository.TaskDef{Name: s.Name, Cron: s.Cron, Parent: s.Parent, Options: s.Opts}
		sched := s.Sched
		if s.Opts.EveryFromCreation {
			sched = sched.AnchoredAt(now) // a new row's creation, to the second
		}
		if next, ok := sched.Next(ready); ok {
			d.NextStartTime = next
		} else {
			d.NextStartTime, d.Finished = now, !s.Sched.Empty()
		}
		defs = append(defs, d)
	}
	if len(defs) > 0 {
		rows, err := n.store.UpsertTasks(ctx, n.cfg.Group, defs)
		if err != nil {
			return fmt.Errorf("easyjob: register tasks: %w", err)
		}
		for _, r := range rows {
			if r.ParentID != 0 {
				n.children.set(r.Name, r)
			}
		}
	}
	if err := n.publishHandlers(ctx); err != nil {
		return err
	}
	// Peers' strategies choose among the nodes that registered a task:
	// publish which ones this node did before it counts as live.
	fps := make(map[string]string, len(n.specs))
	for name, s := range n.specs {
		fps[name] = s.Fingerprint
	}
	set, err := n.store.PublishTaskSet(ctx, repository.TaskSetEntries(fps))
	if err != nil {
		return fmt.Errorf("easyjob: publish task set: %w", err)
	}
	n.picker.setID = set
	node, err := n.store.RegisterNode(ctx, n.cfg.Group, n.cfg.NodeName, n.cfg.Weight)
	if err != nil {
		return fmt.Errorf("easyjob: register node: %w", err)
	}
	n.picker.self = node.ID
	n.beat(t0)
	return n.registerRemoved(ctx, defs)
}

// publishHandlers writes the handler kinds this node runs, with the
// schema of their arguments, for the tools that create schedules.
func (n *Node) publishHandlers(ctx context.Context) error {
	var hs []repository.HandlerDef
	for _, s := range orderedSpecs(n.specs) {
		if s.Handler {
			hs = append(hs, repository.HandlerDef{Kind: s.Name, Schema: json.RawMessage(s.ArgsSchema)})
		}
	}
	if len(hs) == 0 {
		return nil
	}
	if err := n.store.PublishHandlers(ctx, n.cfg.Group, hs); err != nil {
		return fmt.Errorf("easyjob: publish handlers: %w", err)
	}
	return nil
}

// registerRemoved registers again the tasks of defs that were removed
// between this node's upsert and its node row: an operator's Remove checks
// that no live node registers a task, and this node was not live yet, so
// the removal went through; the node would never fire those tasks.
func (n *Node) registerRemoved(ctx context.Context, defs []repository.TaskDef) error {
	if len(defs) == 0 {
		return nil
	}
	rows, err := n.store.RegisteredTasks(ctx, n.cfg.Group)
	if err != nil {
		return fmt.Errorf("easyjob: read tasks after registering: %w", err)
	}
	have := make(map[string]bool, len(rows))
	for _, r := range rows {
		have[r.Name] = true
	}
	var missing []string
	for _, d := range defs {
		if !have[d.Name] {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	n.log.Warn().Strs("tasks", missing).Msg("easyjob: tasks removed while this node registered them; registering them again")
	rows, err = n.store.UpsertTasks(ctx, n.cfg.Group, defs)
	if err != nil {
		return fmt.Errorf("easyjob: register removed tasks again: %w", err)
	}
	for _, r := range rows {
		if r.ParentID != 0 {
			n.children.set(r.Name, r)
		}
	}
	return nil
}

// orderedSpecs lists specs parents first, then by name, so the upsert can
// resolve parents and output is deterministic.
func orderedSpecs(specs map[string]*spec.Spec) []*spec.Spec {
	var out []*spec.Spec
	var visit func(s *spec.Spec)
	visit = func(s *spec.Spec) {
		out = append(out, s)
		for _, c := range s.Children {
			visit(c)
		}
	}
	names := make([]string, 0, len(specs))
	for name, s := range specs {
		if s.Parent == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		visit(specs[name])
	}
	return out
}

// id is this node's id, assigned at registration.
func (n *Node) id() repository.NodeID { return n.picker.self }

// ID is the node's id, assigned at registration (0 before).
func (n *Node) ID() repository.NodeID { return n.id() }

// LastBeat is when the last good heartbeat was sent (local clock), and
// false before the first.
func (n *Node) LastBeat() (time.Time, bool) {
	last := n.lastBeat.Load()
	return time.Unix(0, last), last != 0
}

// Stopping reports that shutdown began.
func (n *Node) Stopping() bool { return n.stopping.Load() }
