package easyjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// dagLedger records each step's runs: fire, node, the time it began and
// ended (local), and what its ParentResults held.
type dagLedger struct {
	mu   sync.Mutex
	runs map[string][]dagRun // task -> runs
}

type dagRun struct {
	fire       time.Time
	node       int64
	shard      int
	shards     int
	began, end time.Time
	inputs     map[string]json.RawMessage
}

func (l *dagLedger) job(name string, fail func(Info) bool) Func {
	return func(ctx context.Context) error {
		info, _ := InfoFromContext(ctx)
		r := dagRun{fire: info.ScheduledAt.UTC(), node: info.NodeID, shard: info.Shard, shards: info.Shards, began: time.Now()}
		in, err := ParentResults(ctx)
		if err != nil {
			return err
		}
		r.inputs = in
		time.Sleep(20 * time.Millisecond) // long enough to overlap a sibling on another node
		if err := SetResult(ctx, map[string]any{"task": name, "shard": info.Shard, "fire": r.fire}); err != nil {
			return err
		}
		r.end = time.Now()
		l.mu.Lock()
		if l.runs == nil {
			l.runs = map[string][]dagRun{}
		}
		l.runs[name] = append(l.runs[name], r)
		l.mu.Unlock()
		if fail != nil && fail(info) {
			return errors.New("failed on purpose")
		}
		return nil
	}
}

func (l *dagLedger) of(name string) []dagRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]dagRun(nil), l.runs[name]...)
}

// diamond registers a -> b, c -> d (d after both) and a 3-shard task s
// after a, with e after s (the reduce).
func diamond(t *testing.T, l *dagLedger, fail func(string, Info) bool, dOpts ...Option) func(*Scheduler) {
	return func(s *Scheduler) {
		j := func(name string) Func {
			var f func(Info) bool
			if fail != nil {
				f = func(i Info) bool { return fail(name, i) }
			}
			return l.job(name, f)
		}
		for _, err := range []error{
			s.Register("a", "* * * * * *", j("a")),
			s.Register("b", "", j("b"), Parents("a")),
			s.Register("c", "", j("c"), Parents("a")),
			s.Register("d", "", j("d"), append([]Option{Parents("b", "c")}, dOpts...)...),
			s.Register("s", "", j("s"), Parents("a"), Shards(3)),
			s.Register("e", "", j("e"), Parents("s")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDAG: across 3 nodes, every fire of a runs b and c, then d once
// after both ended, with both results; the 3 shards of s each once with
// their number, then e once with the 3 shard results; no step twice for a
// fire; history shows the shards under s with distinct shard numbers.
func TestDAG(t *testing.T) {
	t.Parallel()
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, group := tc.store(t)
			var l dagLedger
			for range 3 {
				start(t, fastConfig(store, group), diamond(t, &l, nil))
			}
			c := clusterClient(t, store, group, 3)
			waitFor(t, 30*time.Second, "4 fires through d and e", func() bool { return len(l.of("d")) >= 4 && len(l.of("e")) >= 4 })

			fires := map[time.Time]bool{}
			for _, r := range l.of("a") {
				fires[r.fire] = true
			}
			once := func(name string, key func(dagRun) string) map[string]dagRun {
				seen := map[string]dagRun{}
				for _, r := range l.of(name) {
					k := key(r)
					if _, dup := seen[k]; dup {
						t.Errorf("%s ran twice for %s", name, k)
					}
					seen[k] = r
				}
				return seen
			}
			byFire := func(r dagRun) string { return r.fire.Format(time.RFC3339) }
			bs, cs := once("b", byFire), once("c", byFire)
			ds := once("d", byFire)
			once("s", func(r dagRun) string { return fmt.Sprintf("%s#%d", byFire(r), r.shard) })
			es := once("e", byFire)
			for k, d := range ds {
				b, okb := bs[k]
				cc, okc := cs[k]
				if !okb || !okc {
					t.Errorf("d ran for %s without both b and c", k)
					continue
				}
				if d.began.Before(b.end) || d.began.Before(cc.end) {
					t.Errorf("d began for %s before its parents ended", k)
				}
				if len(d.inputs) != 2 || d.inputs["b"] == nil || d.inputs["c"] == nil {
					t.Errorf("d for %s got parent results %v; want b and c", k, d.inputs)
				}
				if !fires[d.fire] {
					t.Errorf("d ran for %s, not a fire of a", k)
				}
			}
			for k, e := range es {
				if len(e.inputs) != 3 {
					t.Errorf("e for %s got %d shard results; want 3: %v", k, len(e.inputs), e.inputs)
				}
				var shards int
				for i := range 3 {
					if e.inputs[fmt.Sprintf("s[%d]", i)] != nil {
						shards++
					}
				}
				if shards != 3 {
					t.Errorf("e for %s: results %v; want s[0], s[1], s[2]", k, e.inputs)
				}
			}
			for _, r := range l.of("s") {
				if r.shards != 3 || r.shard < 0 || r.shard > 2 {
					t.Errorf("a shard ran as %d of %d", r.shard, r.shards)
				}
			}

			// History: the shards' runs under "s", each with its shard.
			xs, err := c.History(context.Background(), "s", HistoryFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			perFire := map[time.Time]map[int]bool{}
			for _, x := range xs {
				if x.Task != "s" || x.Shard == nil || x.Shards != 3 {
					t.Fatalf("history of s: %+v; want task s with a shard of 3", x)
				}
				if perFire[x.ScheduledAt.UTC()] == nil {
					perFire[x.ScheduledAt.UTC()] = map[int]bool{}
				}
				if perFire[x.ScheduledAt.UTC()][*x.Shard] {
					t.Errorf("history of s: shard %d twice for %s", *x.Shard, x.ScheduledAt)
				}
				perFire[x.ScheduledAt.UTC()][*x.Shard] = true
			}
			dx, err := c.History(context.Background(), "d", HistoryFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range dx {
				if x.Kind != RunChain {
					t.Errorf("d's run %d: kind %s; want chain", x.ID, x.Kind)
				}
			}
		})
	}
}

// TestDAGParentFails: a fire whose b fails does not run d (skip), or runs
// it anyway (EvenIfParentsFail); the fires after it run d again.
func TestDAGParentFails(t *testing.T) {
	t.Parallel()
	for _, anyway := range []bool{false, true} {
		t.Run(fmt.Sprintf("anyway=%v", anyway), func(t *testing.T) {
			t.Parallel()
			store, group := repository.Store(memory.New()), "g"
			var l dagLedger
			var failed sync.Map // fires b failed
			fail := func(name string, i Info) bool {
				if name == "b" && i.ScheduledAt.Second()%2 == 0 {
					failed.Store(i.ScheduledAt.UTC().Format(time.RFC3339), true)
					return true
				}
				return false
			}
			var opts []Option
			if anyway {
				opts = append(opts, EvenIfParentsFail())
			}
			start(t, fastConfig(store, group), diamond(t, &l, fail, opts...))
			waitFor(t, 30*time.Second, "6 fires of a through d or past it", func() bool {
				return len(l.of("c")) >= 6
			})
			time.Sleep(300 * time.Millisecond) // let d's of those fires run
			ran := map[string]bool{}
			for _, d := range l.of("d") {
				ran[d.fire.Format(time.RFC3339)] = true
			}
			var failedFires, okFires int
			for _, cr := range l.of("c")[:5] {
				k := cr.fire.Format(time.RFC3339)
				if _, f := failed.Load(k); f {
					failedFires++
					if ran[k] != anyway {
						t.Errorf("fire %s (b failed): d ran = %v; want %v", k, ran[k], anyway)
					}
				} else {
					okFires++
					if !ran[k] {
						t.Errorf("fire %s (b succeeded): d did not run", k)
					}
				}
			}
			if failedFires == 0 || okFires == 0 {
				t.Fatalf("fires: %d failed, %d not; want both", failedFires, okFires)
			}
		})
	}
}

// TestDAGRefused: steps with a cron, an unknown parent, a cycle through
// Parents, Parent with Parents, shards out of range, a broadcast parent.
func TestDAGRefused(t *testing.T) {
	t.Parallel()
	nop := func(context.Context) error { return nil }
	cases := []struct {
		name string
		reg  func(s *Scheduler)
		want error
	}{
		{"cron", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop)
			_ = s.Register("b", "* * * * * *", nop, Parents("a"))
		}, ErrInvalidCron},
		{"unknown parent", func(s *Scheduler) {
			_ = s.Register("b", "", nop, Parents("zz"))
		}, ErrUnknownParent},
		{"cycle", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop)
			_ = s.Register("b", "", nop, Parents("a", "c"))
			_ = s.Register("c", "", nop, Parents("b"))
		}, ErrCycle},
		{"parent and parents", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop)
			_ = s.Register("b", "", nop, Parent("a"), Parents("a"))
		}, ErrInvalidOption},
		{"shards", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop, Shards(1))
		}, ErrInvalidOption},
		{"broadcast parent", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop, Broadcast())
			_ = s.Register("b", "", nop, Parents("a"))
		}, ErrInvalidOption},
		{"duplicate parent", func(s *Scheduler) {
			_ = s.Register("a", "* * * * * *", nop)
			_ = s.Register("b", "", nop, Parents("a", "a"))
		}, ErrInvalidOption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, group := repository.Store(memory.New()), "g"
			s, err := New(Config{Store: store, Group: group})
			if err != nil {
				t.Fatal(err)
			}
			tc.reg(s)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Run(ctx); !errors.Is(err, tc.want) {
				t.Fatalf("Run: %v; want %v", err, tc.want)
			}
			if ts, _ := store.Tasks(context.Background(), group); len(ts) != 0 {
				t.Fatalf("%d tasks written; want none", len(ts))
			}
		})
	}
}

// TestDAGNodeDies: the node running a DAG step dies mid-run; a peer runs
// the step again for the same fire (at least once), d still runs once
// after both parents, and the steps that had finished (a, c) do not run
// again for that fire.
func TestDAGNodeDies(t *testing.T) {
	t.Parallel()
	store, group := pgStore(t)
	var l dagLedger
	hung := make(chan int64, 1) // the node whose b hangs
	var once sync.Once
	reg := func(s *Scheduler) {
		for _, err := range []error{
			s.Register("a", "*/2 * * * * *", l.job("a", nil)),
			s.Register("b", "", func(ctx context.Context) error {
				info, _ := InfoFromContext(ctx)
				first := false
				once.Do(func() { first = true })
				if first {
					hung <- info.NodeID
					<-ctx.Done() // until its node dies
					return ctx.Err()
				}
				return l.job("b", nil)(ctx)
			}, Parents("a")),
			s.Register("c", "", l.job("c", nil), Parents("a")),
			s.Register("d", "", l.job("d", nil), Parents("b", "c")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	nodes := []*testNode{start(t, fastConfig(store, group), reg), start(t, fastConfig(store, group), reg)}
	clusterClient(t, store, group, 2)
	var victim int64
	select {
	case victim = <-hung:
	case <-time.After(20 * time.Second):
		t.Fatal("b never started")
	}
	for _, n := range nodes {
		if int64(n.n.ID()) == victim {
			n.crash(t)
		}
	}
	waitFor(t, 30*time.Second, "d ran for 3 fires", func() bool { return len(l.of("d")) >= 3 })
	dFires := map[time.Time]int{}
	for _, d := range l.of("d") {
		dFires[d.fire]++
	}
	for f, n := range dFires {
		if n > 1 {
			t.Errorf("d ran %d times for %s", n, f)
		}
	}
	bs := map[time.Time]dagRun{}
	for _, b := range l.of("b") {
		bs[b.fire] = b
	}
	for _, d := range l.of("d") {
		b, ok := bs[d.fire]
		if !ok || d.began.Before(b.end) {
			t.Errorf("d for %s began before b ended (b ran: %v)", d.fire, ok)
		}
	}
	perFire := map[string]int{}
	for _, name := range []string{"a", "c"} {
		for _, r := range l.of(name) {
			perFire[name+"@"+r.fire.String()]++
		}
	}
	for k, n := range perFire {
		if n > 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
}

// TestDAGPausedStepPasses: the fires its parents complete while a step is
// paused do not run on resume; the fires after the resume do.
func TestDAGPausedStepPasses(t *testing.T) {
	t.Parallel()
	store, group := repository.Store(memory.New()), "g"
	var l dagLedger
	start(t, fastConfig(store, group), diamond(t, &l, nil))
	c := clusterClient(t, store, group, 1)
	ctx := context.Background()
	waitFor(t, 20*time.Second, "d ran", func() bool { return len(l.of("d")) >= 1 })
	if _, err := c.Pause(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	paused := dbNow(t, c)
	waitFor(t, 20*time.Second, "3 fires of c while d is paused", func() bool {
		n := 0
		for _, r := range l.of("c") {
			if r.fire.After(paused) {
				n++
			}
		}
		return n >= 3
	})
	if _, err := c.Resume(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	resumed := dbNow(t, c)
	waitFor(t, 20*time.Second, "d ran after the resume", func() bool {
		for _, r := range l.of("d") {
			if r.fire.After(resumed) {
				return true
			}
		}
		return false
	})
	for _, r := range l.of("d") {
		if r.fire.After(paused.Add(time.Second)) && r.fire.Before(resumed.Add(-time.Second)) {
			t.Errorf("d ran for %s, a fire completed while it was paused", r.fire)
		}
	}
}

// TestDAGSilenceRerunsStep: a step cut short by its node's silence past
// the dead threshold (every node cut off: no peer takes it) is recorded
// fenced, and its fire stays due: once the path heals it runs again
// for the same fire, and the step after it runs for that fire too (it
// was lost with the subtree when the cut-short run ended failed).
func TestDAGSilenceRerunsStep(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.OpenStore(t, dsn)
	path, via := pgtest.NewSilentPath(t, dsn)
	cfg := fastConfig(nil, "dag-silent")
	cfg.DSN, cfg.SkipMigrate = via, true
	cfg.CallTimeout = time.Second
	var l dagLedger
	running := make(chan time.Time, 1)
	var once sync.Once
	start(t, cfg, func(s *Scheduler) {
		for _, err := range []error{
			s.Register("a", "*/3 * * * * *", l.job("a", nil)),
			s.Register("b", "", func(ctx context.Context) error {
				info, _ := InfoFromContext(ctx)
				first := false
				once.Do(func() { first = true })
				if first {
					running <- info.ScheduledAt.UTC()
					<-ctx.Done() // cut short by the silence
					return ctx.Err()
				}
				return l.job("b", nil)(ctx)
			}, Parents("a")),
			s.Register("d", "", l.job("d", nil), Parents("b")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	var fire time.Time
	select {
	case fire = <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("b never started")
	}
	path.Silence()
	time.Sleep(3 * time.Second) // past DeadAfter: the node fences itself, cancelling b
	path.Heal()
	waitFor(t, 20*time.Second, "d ran for the fire b was cut short in", func() bool {
		for _, d := range l.of("d") {
			if d.fire.Equal(fire) {
				return true
			}
		}
		return false
	})
	c, err := NewClient(context.Background(), Config{DSN: dsn, Group: "dag-silent"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	xs, err := c.History(context.Background(), "b", HistoryFilter{Fire: fire})
	if err != nil {
		t.Fatal(err)
	}
	var fenced, succeeded int
	for _, x := range xs {
		switch x.Status {
		case repository.ExecFenced:
			fenced++
			if !strings.Contains(x.Error, "cut off from the database") {
				t.Errorf("fenced run's error %q; want it to say why", x.Error)
			}
		case repository.ExecSucceeded:
			succeeded++
		}
	}
	if fenced != 1 || succeeded != 1 {
		t.Fatalf("b's runs of %s: %+v; want one fenced, one succeeded", fire, xs)
	}
}

// TestDAGStepGivenBack: a node whose only worker is busy gives the fires
// of a parent and its DAG step back (no free worker within
// StartDeadline) and, alone in its group, claims them again and runs them
// once the worker is free. Each run is in the history as it ran (the
// give-back once held the run's start key, so the run that followed on
// the same node went unrecorded), and the step runs for every fire its
// parent ran: none is lost.
func TestDAGStepGivenBack(t *testing.T) {
	t.Parallel()
	for _, st := range []struct {
		name  string
		store func(t *testing.T) (repository.Store, string)
	}{
		{"memory", func(*testing.T) (repository.Store, string) { return memory.New(), "g" }},
		{"postgres", func(t *testing.T) (repository.Store, string) { return pgStore(t) }},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			store, group := st.store(t)
			var l dagLedger
			var hogs atomic.Int32
			reg := func(s *Scheduler) {
				for _, err := range []error{
					s.Register("p", "* * * * * *", l.job("p", nil)),
					s.Register("q", "", l.job("q", nil), Parents("p")),
					s.Register("hog", "* * * * * *", func(ctx context.Context) error {
						if hogs.Add(1) <= 2 { // holds the only worker past a few fires
							time.Sleep(1500 * time.Millisecond)
						}
						return nil
					}),
				} {
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			narrow := fastConfig(store, group)
			narrow.Workers, narrow.StartDeadline = 1, 200*time.Millisecond
			n := start(t, narrow, reg)
			waitFor(t, 30*time.Second, "given-back fires, then q for 3 fires after them", func() bool {
				return n.n.Stats().HandedOff > 0 && hogs.Load() > 3 && len(l.of("q")) >= 3
			})
			n.stop(t)
			for _, name := range []string{"p", "q"} {
				hist, err := store.History(context.Background(), group, name, repository.HistoryFilter{Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				ok := map[time.Time]int{}
				for _, x := range hist {
					if x.Status == repository.ExecSucceeded {
						ok[x.ScheduledAt.UTC()]++
					}
				}
				for _, r := range l.of(name) {
					if ok[r.fire] != 1 {
						t.Errorf("%s ran for %s; history holds %d succeeded rows of that fire (%v)", name, r.fire.Format("15:04:05"), ok[r.fire], hist)
					}
				}
			}
			qs := map[time.Time]bool{}
			for _, q := range l.of("q") {
				qs[q.fire] = true
			}
			ps := l.of("p")
			for _, p := range ps[:len(ps)-1] { // the last may have ended with the node
				if !qs[p.fire] {
					t.Errorf("p ran for %s, q never did", p.fire.Format("15:04:05"))
				}
			}
		})
	}
}

// slowFinishes delays the finishes of task's runs by delay, from the
// armed moment on, once: the database slow to answer one finish.
type slowFinishes struct {
	repository.Store
	task  atomic.Int64 // repository.TaskID
	delay time.Duration
	armed atomic.Bool
}

func (s *slowFinishes) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	for _, f := range fs {
		if int64(f.Claim.ID) == s.task.Load() && f.Status == repository.ExecSucceeded && s.armed.CompareAndSwap(true, false) {
			time.Sleep(s.delay)
		}
	}
	return s.Store.Finish(ctx, fs)
}

// runAhead runs parent (every second) and step after it (opt: Parents
// or Parent) on one node, makes one finish of parent slow once step ran,
// so parent's next fire runs before that finish is written, under a
// claim not yet confirmed (internal/claim: Successor), and returns the
// ledger once step ran for 4 fires more.
func runAhead(t *testing.T, parent, step string, opt Option) *dagLedger {
	t.Helper()
	store := &slowFinishes{Store: memory.New(), delay: 1300 * time.Millisecond}
	l := &dagLedger{}
	n := start(t, fastConfig(store, "g"), func(s *Scheduler) {
		for _, err := range []error{
			s.Register(parent, "* * * * * *", l.job(parent, nil)),
			s.Register(step, "", l.job(step, nil), opt),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	waitFor(t, 10*time.Second, step+" ran once", func() bool { return len(l.of(step)) >= 1 })
	p, err := store.Task(context.Background(), "g", parent)
	if err != nil {
		t.Fatal(err)
	}
	store.task.Store(int64(p.ID))
	store.armed.Store(true)
	waitFor(t, 15*time.Second, step+" ran for 4 fires after the slow finish", func() bool {
		return !store.armed.Load() && len(l.of(step)) >= 5
	})
	n.stop(t)
	return l
}

// TestDAGResultOfRunAhead: the result of a parent's run ahead of its
// predecessor's slow finish still reaches the step after it (it once went
// missing: the run's row was written by its finish, without the result).
func TestDAGResultOfRunAhead(t *testing.T) {
	t.Parallel()
	l := runAhead(t, "p", "q", Parents("p"))
	for _, q := range l.of("q") {
		var got struct {
			Fire time.Time `json:"fire"`
		}
		if err := json.Unmarshal(q.inputs["p"], &got); err != nil || !got.Fire.Equal(q.fire) {
			t.Errorf("q for %s got p's result %s; want p's result of that fire", q.fire.Format("15:04:05"), q.inputs["p"])
		}
	}
}

// TestChainOfRunAhead: a chain's step runs for a root fire that ran ahead
// of its predecessor's slow finish.
func TestChainOfRunAhead(t *testing.T) {
	t.Parallel()
	l := runAhead(t, "root", "child", Parent("root"))
	children := map[time.Time]bool{}
	for _, c := range l.of("child") {
		children[c.fire] = true
	}
	for _, r := range l.of("root") {
		if !children[r.fire] {
			t.Errorf("root ran for %s, its child did not", r.fire.Format("15:04:05"))
		}
	}
}

// TestChainStepHeldElsewhere: a chain's step row is held by a node that
// is gone (as when the node that ran the chain was cut off with the step
// claimed, and a peer resumes the fire); the root's run waits for the
// row to be recovered and runs the step for its fire instead of skipping
// it.
func TestChainStepHeldElsewhere(t *testing.T) {
	t.Parallel()
	store := memory.New()
	var l dagLedger
	var hijack sync.Once
	gone := repository.NodeID(999)
	n := start(t, fastConfig(store, "g"), func(s *Scheduler) {
		for _, err := range []error{
			s.Register("root", "* * * * * *", func(ctx context.Context) error {
				hijack.Do(func() { // the step's row, claimed by a node with no row (dead)
					row, err := store.Task(ctx, "g", "child")
					if err == nil {
						_, err = store.Claim(ctx, gone, []repository.TaskRef{row.Ref()})
					}
					if err != nil {
						t.Error(err)
					}
				})
				return l.job("root", nil)(ctx)
			}),
			s.Register("child", "", l.job("child", nil), Parent("root")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	waitFor(t, 15*time.Second, "root ran 3 times", func() bool { return len(l.of("root")) >= 3 })
	waitFor(t, 5*time.Second, "child ran for the root's first 3 fires", func() bool { return len(l.of("child")) >= 3 })
	n.stop(t)
	children := map[time.Time]bool{}
	for _, c := range l.of("child") {
		children[c.fire] = true
	}
	if first := l.of("root")[0]; !children[first.fire] {
		t.Errorf("the root ran for %s with its step's row held by a gone node; the step did not run for that fire", first.fire.Format("15:04:05"))
	}
}
