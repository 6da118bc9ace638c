package easyjob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository/memory"
)

func regNopJob(context.Context) error { return nil }

// regMemScheduler returns a Scheduler on a fresh memory store.
func regMemScheduler(t *testing.T) (*Scheduler, *memory.Store) {
	t.Helper()
	st := memory.New()
	s, err := New(Config{Store: st, Group: groupFor(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// wantErr checks errors.Is(err, sentinel) and that the message names every
// string in names.
func regWantErr(t *testing.T, err, sentinel error, names ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v: want errors.Is(%v)", err, sentinel)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

func TestRegisterInvalidName(t *testing.T) {
	for _, name := range []string{
		"", " ", "\t", " lead", "trail ", "nl\n", strings.Repeat("x", maxNameLen+1),
		"in\nner", "esc\x1b[31mred", "nul\x00", "del\x7f", "bad\xffutf8",
	} {
		s, _ := regMemScheduler(t)
		err := s.Register(name, "* * * * *", regNopJob)
		regWantErr(t, err, ErrInvalidName)
	}
	// The limits themselves are fine, and so are inner spaces.
	for _, name := range []string{"a", strings.Repeat("x", maxNameLen), "nightly report", "ünïcode-名前"} {
		s, _ := regMemScheduler(t)
		if err := s.Register(name, "* * * * *", regNopJob); err != nil {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
}

func TestRegisterNilFunc(t *testing.T) {
	s, _ := regMemScheduler(t)
	regWantErr(t, s.Register("nilfn", "* * * * *", nil), ErrNilFunc, `"nilfn"`)
}

func TestRegisterInvalidCron(t *testing.T) {
	for _, c := range []struct{ cron, mention string }{
		{"bogus", "bogus"},
		{"* * * *", "* * * *"},             // too few fields
		{"* * * * * * * *", "* * * * * *"}, // too many
		{"61 * * * *", "61"},               // minute out of range
		{"* 25 * * *", "25"},               // hour out of range
		{"* * 32 * *", "32"},               // day out of range
		{"* * * 13 *", "13"},               // month out of range
		{"0 0 0 30 2 *", "never fires"},    // valid syntax, Feb 30 never comes
		{"0 0 0 31 4 *", "never fires"},    // April 31
		{"CRON_TZ=UTC", "no fields"},
		{"CRON_TZ=Nowhere/Atlantis * * * * *", "Nowhere/Atlantis"},
	} {
		s, _ := regMemScheduler(t)
		err := s.Register("badcron", c.cron, regNopJob)
		regWantErr(t, err, ErrInvalidCron, `"badcron"`, c.mention)
	}
}

func TestRegisterRootWithoutCron(t *testing.T) {
	s, _ := regMemScheduler(t)
	regWantErr(t, s.Register("lonely", "", regNopJob), ErrInvalidCron, `"lonely"`, "root")
	s, _ = regMemScheduler(t)
	regWantErr(t, s.Register("blank", "   ", regNopJob), ErrInvalidCron, `"blank"`)
	// A child may have no cron.
	s, _ = regMemScheduler(t)
	if err := s.Register("kid", "", regNopJob, Parent("p")); err != nil {
		t.Fatalf("child without cron: %v", err)
	}
}

func TestRegisterInvalidOptions(t *testing.T) {
	for name, opt := range map[string]Option{
		"parent":   Parent(""),
		"timeout0": Timeout(0),
		"timeout-": Timeout(-time.Second),
		"retry-":   Retry(-1, time.Second),
		"retryb-":  Retry(1, -time.Second),
		"tz":       TZ("Mars/Olympus_Mons"),
		"nilmis":   Misfire(MisfirePolicy{}, 0),
		"negthr":   Misfire(Skip(), -time.Second),
		"catchup0": Misfire(CatchUp(0), 0),
	} {
		s, _ := regMemScheduler(t)
		regWantErr(t, s.Register(name, "* * * * *", regNopJob, opt), ErrInvalidOption, `"`+name+`"`)
	}
	// A nil option is ignored.
	s, _ := regMemScheduler(t)
	if err := s.Register("nilopt", "* * * * *", regNopJob, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRegisterOptionDefaults(t *testing.T) {
	spec := newTaskSpec("d", "* * * * *", regNopJob, nil)
	if spec.err != nil {
		t.Fatal(spec.err)
	}
	if spec.Opts.Misfire != "fire_once_now" || spec.Opts.MisfireThreshold != schedule.DefaultMisfireThreshold || spec.Opts.Recover != "rerun" {
		t.Errorf("defaults: %+v", spec.Opts)
	}
	spec = newTaskSpec("o", "0 9 * * *", regNopJob, []Option{
		TZ("Asia/Tokyo"), Timeout(time.Minute), Retry(3, 0), Misfire(CatchUp(4), time.Minute), SkipInterrupted(),
	})
	if spec.err != nil {
		t.Fatal(spec.err)
	}
	o := spec.Opts
	if o.Timezone != "Asia/Tokyo" || o.Timeout != time.Minute || o.MaxRetries != 3 || o.RetryBackoff != time.Second ||
		o.Misfire != "catch_up" || o.CatchUpMax != 4 || o.MisfireThreshold != time.Minute || o.Recover != "skip" {
		t.Errorf("options: %+v", o)
	}
	if spec.Sched.Location().String() != "Asia/Tokyo" {
		t.Errorf("TZ option not applied to the schedule: %v", spec.Sched.Location())
	}
}

func TestRegisterDuplicate(t *testing.T) {
	s, _ := regMemScheduler(t)
	if err := s.Register("twice", "* * * * *", regNopJob); err != nil {
		t.Fatal(err)
	}
	regWantErr(t, s.Register("twice", "*/2 * * * *", regNopJob), ErrDuplicateTask, `"twice"`)
	// validateForest finds it too, whatever Register said.
	_, err := validateForest([]*taskSpec{
		newTaskSpec("x", "* * * * *", regNopJob, nil),
		newTaskSpec("x", "* * * * *", regNopJob, nil),
	})
	regWantErr(t, err, ErrDuplicateTask, `"x"`)
}

func regSpec(name, parent string) *taskSpec {
	cron := "* * * * *"
	var opts []Option
	if parent != "" {
		cron, opts = "", []Option{Parent(parent)}
	}
	s := newTaskSpec(name, cron, regNopJob, opts)
	if s.err != nil {
		panic(s.err)
	}
	return s
}

func TestRegistryForestUnknownParent(t *testing.T) {
	_, err := validateForest([]*taskSpec{regSpec("root", ""), regSpec("orphan", "ghost")})
	regWantErr(t, err, ErrUnknownParent, `"orphan"`, `"ghost"`)
}

func TestRegistryForestCycles(t *testing.T) {
	for _, c := range []struct {
		name  string
		specs []*taskSpec
		path  string
	}{
		{"self", []*taskSpec{regSpec("root", ""), regSpec("a", "a")}, "a -> a"},
		{"two", []*taskSpec{regSpec("root", ""), regSpec("a", "b"), regSpec("b", "a")}, "a -> b -> a"},
		{"three", []*taskSpec{regSpec("a", "c"), regSpec("b", "a"), regSpec("c", "b"), regSpec("root", "")}, "a -> c -> b -> a"},
		// A task hanging below a cycle is reported through it.
		{"below", []*taskSpec{regSpec("d", "a"), regSpec("a", "b"), regSpec("b", "a")}, "d -> a -> b -> a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := validateForest(c.specs)
			regWantErr(t, err, ErrCycle, c.path)
		})
	}
}

func TestRegistryForestFirstSpecError(t *testing.T) {
	bad := newTaskSpec("bad", "nope", regNopJob, nil)
	_, err := validateForest([]*taskSpec{regSpec("ok", ""), bad})
	if err != bad.err {
		t.Fatalf("want the spec's own error %v, got %v", bad.err, err)
	}
	if _, err := validateForest(nil); !errors.Is(err, ErrNoTasks) {
		t.Fatalf("empty forest: %v", err)
	}
}

func TestRegistryForestLinksChildrenInOrder(t *testing.T) {
	specs := []*taskSpec{regSpec("c2", "r"), regSpec("r", ""), regSpec("c1", "r"), regSpec("g", "c1")}
	for range 2 { // validating twice must not duplicate children
		byName, err := validateForest(specs)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range byName["r"].Children {
			got = append(got, c.Name)
		}
		if strings.Join(got, ",") != "c2,c1" {
			t.Fatalf("children of r = %v, want registration order c2,c1", got)
		}
		if len(byName["c1"].Children) != 1 || byName["c1"].Children[0].Name != "g" {
			t.Fatalf("children of c1 = %v", byName["c1"].Children)
		}
	}
}

func TestRegisterAfterRunStarted(t *testing.T) {
	st := memory.New()
	up := make(chan struct{})
	cfg := Config{Store: st, Group: groupFor(t), hooks: &node.Hooks{OnNode: func(*node.Node) { close(up) }}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("t", "0 0 1 1 *", regNopJob); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case <-up:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned early: %v", err)
	}
	regWantErr(t, s.Register("late", "* * * * *", regNopJob), ErrAlreadyRunning, `"late"`)
	if err := s.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	tasks, err := st.Tasks(context.Background(), cfg.Group)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Name != "t" {
		t.Fatalf("tasks after run: %+v", tasks)
	}
}

func TestRegistryRunNoTasks(t *testing.T) {
	s, st := regMemScheduler(t)
	if err := s.Run(context.Background()); !errors.Is(err, ErrNoTasks) {
		t.Fatalf("Run with no tasks: %v", err)
	}
	regAssertEmptyStore(t, st, groupFor(t))
}

func TestRegistryRunReportsRegistrationError(t *testing.T) {
	cases := map[string]func(s *Scheduler) error{
		"cron": func(s *Scheduler) error {
			_ = s.Register("good", "* * * * *", regNopJob)
			return s.Register("bad", "70 * * * *", regNopJob)
		},
		"parent": func(s *Scheduler) error {
			_ = s.Register("good", "* * * * *", regNopJob)
			return s.Register("orphan", "", regNopJob, Parent("ghost"))
		},
		"cycle": func(s *Scheduler) error {
			_ = s.Register("good", "* * * * *", regNopJob)
			_ = s.Register("a", "", regNopJob, Parent("b"))
			return s.Register("b", "", regNopJob, Parent("a"))
		},
		"dup": func(s *Scheduler) error {
			_ = s.Register("good", "* * * * *", regNopJob)
			return s.Register("good", "* * * * *", regNopJob)
		},
	}
	want := map[string]error{"cron": ErrInvalidCron, "parent": ErrUnknownParent, "cycle": ErrCycle, "dup": ErrDuplicateTask}
	for name, reg := range cases {
		t.Run(name, func(t *testing.T) {
			s, st := regMemScheduler(t)
			regErr := reg(s)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := s.Run(ctx)
			regWantErr(t, err, want[name])
			if regErr != nil && err.Error() != regErr.Error() {
				t.Errorf("Run reported %q, Register said %q", err, regErr)
			}
			regAssertEmptyStore(t, st, groupFor(t))
		})
	}
}

// regAssertEmptyStore checks that nothing was written for group.
func regAssertEmptyStore(t *testing.T, st *memory.Store, group string) {
	t.Helper()
	ctx := context.Background()
	tasks, err := st.Tasks(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 0 {
		t.Errorf("store has %d task rows after a failed Run: %+v", len(tasks), tasks)
	}
	nodes, err := st.Nodes(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 0 {
		t.Errorf("store has %d node rows after a failed Run", len(nodes))
	}
}

// TestRegisterRetryScheduledAt: a retry is a new fire at its backoff
// time: Attempt counts up and ScheduledAt is when that attempt was due
// (documented on Info), never earlier than the first attempt's.
func TestRegisterRetryScheduledAt(t *testing.T) {
	st := memory.New()
	s, err := New(Config{Store: st, Group: groupFor(t)})
	if err != nil {
		t.Fatal(err)
	}
	infos := make(chan Info, 10)
	err = s.Register("flaky", "* * * * * *", func(ctx context.Context) error {
		info, _ := InfoFromContext(ctx)
		select {
		case infos <- info:
		default:
		}
		if info.Attempt == 1 {
			return errors.New("flaky")
		}
		return nil
	}, Retry(1, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	run := runBackground(t, s)
	var got []Info
	for len(got) < 2 {
		select {
		case i := <-infos:
			got = append(got, i)
		case <-run.ended:
			t.Fatalf("Run returned early: %v", run.err)
		case <-time.After(10 * time.Second):
			t.Fatalf("saw only %d runs", len(got))
		}
	}
	if got[0].Attempt != 1 || got[1].Attempt != 2 {
		t.Fatalf("attempts %d, %d", got[0].Attempt, got[1].Attempt)
	}
	if !got[1].ScheduledAt.After(got[0].ScheduledAt) {
		t.Errorf("retry ScheduledAt %v not after the first attempt's %v",
			got[1].ScheduledAt.Format(time.RFC3339Nano), got[0].ScheduledAt.Format(time.RFC3339Nano))
	}
}
