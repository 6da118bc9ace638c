package easyjob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// yearly fires on January 1st only: a task that runs only when triggered.
const yearly = "0 0 0 1 1 *"

// blocker is a job whose runs block until released; it records how many
// ran and the most that ran at once.
type blocker struct {
	started    chan struct{} // one value per run start
	release    chan struct{} // closed to let every run (now and later) finish
	once       sync.Once
	runs       atomic.Int32
	running    atomic.Int32
	maxRunning atomic.Int32
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocker) job(ctx context.Context) error {
	r := b.running.Add(1)
	defer b.running.Add(-1)
	for {
		m := b.maxRunning.Load()
		if r <= m || b.maxRunning.CompareAndSwap(m, r) {
			break
		}
	}
	b.runs.Add(1)
	b.started <- struct{}{}
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blocker) unblock() { b.once.Do(func() { close(b.release) }) }

func (b *blocker) waitStart(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start within 10s")
	}
}

// groupSeq keeps groups apart when a test runs more than once (-count).
var groupSeq atomic.Int64

// clientStore is pgStore with a group of this run of the test alone.
func clientStore(t *testing.T) (repository.Store, string) {
	store, group := pgStore(t)
	return store, fmt.Sprintf("%s_%d", group, groupSeq.Add(1))
}

// newTestClient returns a client on store for group, closed at the end.
func newTestClient(t *testing.T, store repository.Store, group string) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startOne runs a node with one task name/cron/fn in group.
func startOne(t *testing.T, store repository.Store, group, name, cron string, fn Func) *testNode {
	t.Helper()
	return start(t, fastConfig(store, group), func(s *Scheduler) {
		if err := s.Register(name, cron, fn); err != nil {
			t.Fatal(err)
		}
	})
}

func mustTask(t *testing.T, c *Client, name string) TaskInfo {
	t.Helper()
	ti, err := c.Task(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return ti
}

func TestClientTriggerPending(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	var l ledger
	startOne(t, store, group, "job", yearly, l.job(nil))
	c := newTestClient(t, store, group)
	ti, err := c.Trigger(context.Background(), "job")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Status != repository.TaskPending && ti.Status != repository.TaskDoing {
		t.Fatalf("status after trigger %s", ti.Status)
	}
	waitFor(t, 5*time.Second, "the triggered run", func() bool { return l.count("job") == 1 })
	// A window, not a wait: a second run of the one trigger would start
	// within it (it spans three 200 ms loader polls).
	time.Sleep(700 * time.Millisecond)
	if k := l.count("job"); k != 1 {
		t.Fatalf("%d runs after one trigger, want 1", k)
	}
	waitFor(t, 5*time.Second, "the task back to pending on its yearly fire", func() bool {
		ti := mustTask(t, c, "job")
		return ti.Status == repository.TaskPending && ti.NextStartTime.Month() == time.January
	})
}

func TestClientTriggerPaused(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	var l ledger
	tn := startOne(t, store, group, "job", "* * * * * *", l.job(nil))
	c := newTestClient(t, store, group)
	ctx := context.Background()
	if _, err := c.Pause(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	// A fire queued at Pause still runs; its finish parks the task and the
	// node forgets the claim: then no fire of before the pause is left.
	waitFor(t, 5*time.Second, "the task parked paused and its claim dropped", func() bool {
		return mustTask(t, c, "job").Status == repository.TaskPaused && tn.n.Held() == 0
	})
	before := l.count("job")
	ti, err := c.Trigger(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if !ti.Paused {
		t.Fatalf("trigger cleared the pause: %+v", ti)
	}
	waitFor(t, 5*time.Second, "the triggered run", func() bool { return l.count("job") == before+1 })
	waitFor(t, 5*time.Second, "the task parked paused again", func() bool { return mustTask(t, c, "job").Status == repository.TaskPaused })
	// A window, not a wait: the every-second task must stay paused over
	// it (a fire second or more, seven loader polls).
	time.Sleep(1500 * time.Millisecond)
	if k := l.count("job"); k != before+1 {
		t.Fatalf("%d runs after the trigger of a paused task, want exactly 1", k-before)
	}
}

func TestClientTriggerWhileRunning(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	b := newBlocker()
	defer b.unblock()
	tn := startOne(t, store, group, "job", yearly, b.job)
	c := newTestClient(t, store, group)
	ctx := context.Background()
	if _, err := c.Trigger(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	b.waitStart(t)
	ti, err := c.Trigger(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Status != repository.TaskDoing || !ti.TriggerRequested {
		t.Fatalf("trigger while running: status %s, trigger requested %v; want doing, true", ti.Status, ti.TriggerRequested)
	}
	// A second trigger while the same fire runs asks for the same one extra run.
	if _, err := c.Trigger(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	// A window, not a wait: an overlapping run would start within it (it
	// spans two 200 ms loader polls).
	time.Sleep(500 * time.Millisecond)
	if k := b.runs.Load(); k != 1 {
		t.Fatalf("%d runs while the first still runs, want 1 (no overlap)", k)
	}
	b.unblock()
	b.waitStart(t)
	// The extra run returns at once; its finish leaves the row pending, no
	// request left, and the node without a claim: nothing more can run.
	waitFor(t, 5*time.Second, "the extra run finished and the claim dropped", func() bool {
		ti := mustTask(t, c, "job")
		return ti.Status == repository.TaskPending && !ti.TriggerRequested && tn.n.Held() == 0
	})
	if k := b.runs.Load(); k != 2 {
		t.Fatalf("%d runs, want 2: the running one and exactly one extra", k)
	}
	if m := b.maxRunning.Load(); m != 1 {
		t.Fatalf("%d runs overlapped", m)
	}
	xs, err := c.History(ctx, "job", HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 2 || xs[0].Status != repository.ExecSucceeded || xs[1].Status != repository.ExecSucceeded {
		t.Fatalf("history %+v, want 2 succeeded runs", xs)
	}
	if !xs[0].StartedAt.After(xs[1].FinishedAt) && !xs[0].StartedAt.Equal(xs[1].FinishedAt) {
		t.Fatalf("the extra run started at %v, before the first finished at %v", xs[0].StartedAt, xs[1].FinishedAt)
	}
	if ti := mustTask(t, c, "job"); ti.TriggerRequested || ti.NextStartTime.Month() != time.January {
		t.Fatalf("after the extra run: %+v, want no request and the yearly fire next", ti)
	}
}

func TestClientPauseWhileRunningThenResume(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	b := newBlocker()
	defer b.unblock()
	startOne(t, store, group, "job", "* * * * * *", b.job)
	c := newTestClient(t, store, group)
	ctx := context.Background()
	b.waitStart(t)
	ti, err := c.Pause(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Status != repository.TaskDoing || !ti.Paused {
		t.Fatalf("pause while running: status %s paused %v, want doing, true", ti.Status, ti.Paused)
	}
	b.unblock()
	waitFor(t, 5*time.Second, "the task parked paused", func() bool { return mustTask(t, c, "job").Status == repository.TaskPaused })
	xs, err := c.History(ctx, "job", HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 1 || xs[0].Status != repository.ExecSucceeded || xs[0].FinishedAt.IsZero() {
		t.Fatalf("history %+v, want the running fire recorded as succeeded", xs)
	}
	// A window, not a wait: the every-second task must stay paused over it.
	time.Sleep(1500 * time.Millisecond)
	if k := b.runs.Load(); k != 1 {
		t.Fatalf("%d runs while paused, want the 1 that was running", k)
	}

	ti, err = c.Resume(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Paused || ti.Status != repository.TaskPending {
		t.Fatalf("after resume: status %s paused %v, want pending, false", ti.Status, ti.Paused)
	}
	waitFor(t, 5*time.Second, "fires after resume", func() bool { return b.runs.Load() >= 3 })
	if m := b.maxRunning.Load(); m != 1 {
		t.Fatalf("%d runs overlapped", m)
	}
}

func TestClientRescheduleWhileQueued(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	var l ledger
	tn := startOne(t, store, group, "job", "* * * * * *", l.job(nil))
	c := newTestClient(t, store, group)
	ctx := context.Background()
	// Every-second fires keep their claim: between runs the next fire is
	// queued on the node (status doing).
	waitFor(t, 5*time.Second, "a run and the next fire queued", func() bool {
		return l.count("job") >= 1 && mustTask(t, c, "job").Status == repository.TaskDoing
	})
	ti, err := c.Reschedule(ctx, "job", yearly)
	if err != nil {
		t.Fatal(err)
	}
	now, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantNext := time.Date(now.Year()+1, time.January, 1, 0, 0, 0, 0, time.UTC)
	if ti.Cron != yearly || !ti.NextStartTime.Equal(wantNext) {
		t.Fatalf("rescheduled row: cron %q next %v, want %q %v", ti.Cron, ti.NextStartTime, yearly, wantNext)
	}
	k0 := l.count("job")
	// The fire queued before the reschedule may still run; its finish
	// leaves the row pending on the yearly fire and drops the claim.
	waitFor(t, 5*time.Second, "the queued fire finished and the claim dropped", func() bool {
		return mustTask(t, c, "job").Status == repository.TaskPending && tn.n.Held() == 0
	})
	if k := l.count("job"); k > k0+1 {
		t.Fatalf("%d runs after rescheduling to yearly, want at most the 1 already queued", k-k0)
	}
	ti = mustTask(t, c, "job")
	if ti.Status != repository.TaskPending || ti.Cron != yearly || !ti.NextStartTime.Equal(wantNext) {
		t.Fatalf("after the queued fire: %+v, want pending on %q at %v", ti, yearly, wantNext)
	}
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("double fires: %v", d)
	}

	// And back: the new cron applies to a pending task at once.
	k1 := l.count("job")
	if _, err := c.Reschedule(ctx, "job", "* * * * * *"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "fires on the new cron", func() bool { return l.count("job") >= k1+2 })
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("double fires: %v", d)
	}
}

func TestClientRescheduleInvalid(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	writeTask(t, store, group, "job", yearly)
	c := newTestClient(t, store, group)
	ctx := context.Background()
	for _, cron := range []string{"not a cron", "61 * * * *", "0 0 30 2 *", "", "CRON_TZ=Mars/Olympus * * * * *"} {
		_, err := c.Reschedule(ctx, "job", cron)
		if !errors.Is(err, ErrInvalidCron) || !strings.Contains(err.Error(), `"job"`) {
			t.Errorf("Reschedule(%q) = %v, want ErrInvalidCron naming the task", cron, err)
		}
	}
	if ti := mustTask(t, c, "job"); ti.Cron != yearly {
		t.Fatalf("an invalid reschedule changed the cron to %q", ti.Cron)
	}
	// The task's own time zone applies.
	writeTaskTZ(t, store, group, "tz", yearly, "Asia/Tokyo")
	ti, err := c.Reschedule(ctx, "tz", "0 0 9 * * *")
	if err != nil {
		t.Fatal(err)
	}
	if h, m, s := ti.NextStartTime.UTC().Clock(); h != 0 || m != 0 || s != 0 {
		t.Fatalf("09:00 Tokyo is 00:00 UTC, got next %v", ti.NextStartTime)
	}
}

func TestClientUnknownTask(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	writeTask(t, store, group, "job", yearly)
	c := newTestClient(t, store, group)
	ctx := context.Background()
	ops := map[string]func() error{
		"Trigger":    func() error { _, err := c.Trigger(ctx, "ghost"); return err },
		"Pause":      func() error { _, err := c.Pause(ctx, "ghost"); return err },
		"Resume":     func() error { _, err := c.Resume(ctx, "ghost"); return err },
		"Reschedule": func() error { _, err := c.Reschedule(ctx, "ghost", "* * * * *"); return err },
		"History":    func() error { _, err := c.History(ctx, "ghost", HistoryFilter{}); return err },
		"Task":       func() error { _, err := c.Task(ctx, "ghost"); return err },
	}
	for name, op := range ops {
		err := op()
		if !errors.Is(err, ErrTaskNotFound) || !strings.Contains(err.Error(), `"ghost"`) {
			t.Errorf("%s(ghost) = %v, want ErrTaskNotFound naming it", name, err)
		}
	}
	// Another group does not see the task.
	other := newTestClient(t, store, group+"_other")
	if _, err := other.Trigger(ctx, "job"); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Trigger in another group = %v, want ErrTaskNotFound", err)
	}
}

func TestClientHistoryPaging(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	writeTask(t, store, group, "job", yearly)
	ids := writeRuns(t, store, group, "job", 7, func(i int) repository.ExecStatus {
		if i%3 == 0 {
			return repository.ExecFailed
		}
		return repository.ExecSucceeded
	})
	c := newTestClient(t, store, group)
	ctx := context.Background()
	var got []int64
	before := int64(0)
	for page := 0; ; page++ {
		xs, err := c.History(ctx, "job", HistoryFilter{Limit: 3, BeforeID: before})
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) == 0 {
			break
		}
		if len(xs) > 3 || page > 3 {
			t.Fatalf("page %d has %d runs", page, len(xs))
		}
		for _, x := range xs {
			if x.Task != "job" || x.FinishedAt.IsZero() || x.Duration() < 0 {
				t.Fatalf("run %+v", x)
			}
			got = append(got, x.ID)
		}
		before = xs[len(xs)-1].ID
	}
	if len(got) != len(ids) {
		t.Fatalf("paged %d runs, want %d", len(got), len(ids))
	}
	for i, id := range got {
		if id != ids[len(ids)-1-i] {
			t.Fatalf("page order %v, want newest first of %v", got, ids)
		}
	}
	failed, err := c.History(ctx, "job", HistoryFilter{Status: repository.ExecFailed})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 3 { // i = 0, 3, 6
		t.Fatalf("%d failed runs, want 3", len(failed))
	}
	for _, x := range failed {
		if x.Status != repository.ExecFailed || x.Error == "" {
			t.Fatalf("failed filter returned %+v", x)
		}
	}
}

func TestClientPruneHistory(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	writeTask(t, store, group, "job", yearly)
	writeRuns(t, store, group, "job", 5, nil)
	c := newTestClient(t, store, group)
	ctx := context.Background()
	if _, err := c.PruneHistory(ctx, -time.Second, 0); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("negative maxAge: %v, want ErrInvalidOption", err)
	}
	if k, err := c.PruneHistory(ctx, 0, 0); err != nil || k != 0 {
		t.Fatalf("no bounds deleted %d (%v), want 0", k, err)
	}
	if k, err := c.PruneHistory(ctx, time.Hour, 0); err != nil || k != 0 {
		t.Fatalf("maxAge 1h deleted %d fresh runs (%v), want 0", k, err)
	}
	k, err := c.PruneHistory(ctx, 0, 2)
	if err != nil || k != 3 {
		t.Fatalf("maxRows 2 deleted %d (%v), want 3", k, err)
	}
	xs, err := c.History(ctx, "job", HistoryFilter{})
	if err != nil || len(xs) != 2 {
		t.Fatalf("history after prune: %d runs (%v), want 2", len(xs), err)
	}
	time.Sleep(50 * time.Millisecond) // not an event: the runs must age past the 1 ms maxAge below
	if k, err := c.PruneHistory(ctx, time.Millisecond, 0); err != nil || k != 2 {
		t.Fatalf("maxAge 1ms deleted %d (%v), want 2", k, err)
	}
}

func TestClientHousekeeping(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	var l ledger
	cfg := fastConfig(store, group)
	cfg.HistoryMaxRows = 2
	tn := start(t, cfg, func(s *Scheduler) { _ = s.Register("job", yearly, l.job(nil)) })
	writeTask(t, store, group, "other", yearly)
	writeRuns(t, store, group, "other", 4, nil)
	if err := tn.n.Housekeep(context.Background()); err != nil {
		t.Fatal(err)
	}
	xs, err := store.History(context.Background(), group, "other", repository.HistoryFilter{})
	if err != nil || len(xs) != 2 {
		t.Fatalf("after housekeeping: %d runs (%v), want 2", len(xs), err)
	}
}

func TestClientNodes(t *testing.T) {
	store, group := clientStore(t)
	ctx := context.Background()
	writeTask(t, store, group, "a", yearly)
	writeTask(t, store, group, "b", yearly)
	dead, err := store.RegisterNode(ctx, group, "dead", 1)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := store.RegisterNode(ctx, group, "two", 3)
	if err != nil {
		t.Fatal(err)
	}
	n3, err := store.RegisterNode(ctx, group, "three", 1)
	if err != nil {
		t.Fatal(err)
	}
	// n3 claims both tasks; then dead stays silent past DeadAfter.
	a, b := taskRow(t, store, group, "a"), taskRow(t, store, group, "b")
	if won, err := store.Claim(ctx, n3.ID, []repository.TaskRef{a.Ref(), b.Ref()}); err != nil || len(won) != 2 {
		t.Fatalf("claim: %d won (%v)", len(won), err)
	}
	// Not an event: dead's heartbeat must age past DeadAfter (300 ms) while
	// two and three beat again below.
	time.Sleep(400 * time.Millisecond)
	n2.Counts = 7
	for _, n := range []repository.Node{n2, n3} {
		if _, err := store.Heartbeat(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewClient(ctx, Config{Store: store, Group: group,
		HeartbeatInterval: 100 * time.Millisecond, LiveAfter: 200 * time.Millisecond, DeadAfter: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ns, err := c.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 3 {
		t.Fatalf("%d nodes, want 3", len(ns))
	}
	d, two, three := ns[0], ns[1], ns[2]
	if d.ID != int64(dead.ID) || d.Live || !d.Dead || d.RowNumber != 0 || d.HeartbeatAge < 300*time.Millisecond || d.Name != "dead" {
		t.Errorf("dead node %+v", d)
	}
	if two.ID != int64(n2.ID) || !two.Live || two.Dead || two.RowNumber != 1 || two.Weight != 3 || two.Counts != 7 ||
		two.InFlight != 0 || two.HeartbeatAge > 200*time.Millisecond || two.StartedAt.IsZero() {
		t.Errorf("node two %+v", two)
	}
	if three.ID != int64(n3.ID) || !three.Live || three.RowNumber != 2 || three.InFlight != 2 || three.Name != "three" {
		t.Errorf("node three %+v", three)
	}
}

func TestClientOwnPool(t *testing.T) {
	t.Parallel()
	dsn := pgtest.SharedDatabase(t)
	ctx := context.Background()
	c, err := NewClient(ctx, Config{DSN: dsn, Group: groupFor(t)})
	if err != nil {
		t.Fatal(err)
	}
	if ts, err := c.Tasks(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("tasks of a new group: %v (%v)", ts, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := NewClient(ctx, Config{DSN: dsn, LiveAfter: time.Second, DeadAfter: time.Second}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("DeadAfter == LiveAfter: %v, want ErrInvalidConfig", err)
	}
}

func TestClientTasksParent(t *testing.T) {
	t.Parallel()
	store, group := clientStore(t)
	ctx := context.Background()
	now, _ := store.Now(ctx)
	if _, err := store.UpsertTasks(ctx, group, []repository.TaskDef{
		{Name: "p", Cron: yearly, NextStartTime: now.Add(time.Hour)},
		{Name: "c", Parent: "p", NextStartTime: now},
	}); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, store, group)
	ts, err := c.Tasks(ctx)
	if err != nil || len(ts) != 2 {
		t.Fatalf("tasks %v (%v)", ts, err)
	}
	if ts[0].Name != "p" || ts[0].Parent != "" || ts[1].Name != "c" || ts[1].Parent != "p" {
		t.Fatalf("tasks %+v", ts)
	}
	ti, err := c.Pause(ctx, "c")
	if err != nil || ti.Parent != "p" {
		t.Fatalf("pause child: %+v (%v)", ti, err)
	}
	// A child may have an empty cron; a root may not.
	if _, err := c.Reschedule(ctx, "c", ""); err != nil {
		t.Fatalf("reschedule child to empty cron: %v", err)
	}
	if _, err := c.Reschedule(ctx, "p", ""); !errors.Is(err, ErrInvalidCron) {
		t.Fatalf("reschedule root to empty cron: %v, want ErrInvalidCron", err)
	}
}

// ---- store helpers: write rows without a running node ----

func writeTask(t *testing.T, store repository.Store, group, name, cron string) {
	writeTaskTZ(t, store, group, name, cron, "")
}

func writeTaskTZ(t *testing.T, store repository.Store, group, name, cron, tz string) {
	t.Helper()
	ctx := context.Background()
	now, err := store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpsertTasks(ctx, group, []repository.TaskDef{{
		Name: name, Cron: cron, Options: repository.TaskOptions{Timezone: tz}, NextStartTime: now.Add(time.Hour),
	}}); err != nil {
		t.Fatal(err)
	}
}

func taskRow(t *testing.T, store repository.Store, group, name string) repository.Task {
	t.Helper()
	row, err := store.Task(context.Background(), group, name)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// writeRuns records k finished runs of a stored task (claim, start, finish
// through the store, as a node would) and returns their ids, oldest first.
// status(i) picks each run's outcome (nil: all succeeded).
func writeRuns(t *testing.T, store repository.Store, group, name string, k int, status func(i int) repository.ExecStatus) []int64 {
	t.Helper()
	ctx := context.Background()
	node, err := store.RegisterNode(ctx, group, "writer", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.DeleteNode(ctx, node.ID) }()
	var ids []int64
	for i := range k {
		row := taskRow(t, store, group, name)
		won, err := store.Claim(ctx, node.ID, []repository.TaskRef{row.Ref()})
		if err != nil || len(won) != 1 {
			t.Fatalf("claim %s: %d won (%v)", name, len(won), err)
		}
		cl := won[0].Claim()
		x, err := store.StartExecution(ctx, cl, repository.Execution{ScheduledAt: won[0].NextStartTime, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		st, msg := repository.ExecSucceeded, ""
		if status != nil {
			st = status(i)
		}
		if st != repository.ExecSucceeded {
			msg = "boom"
		}
		res, err := store.Finish(ctx, []repository.Finish{{
			Claim: cl, ExecutionID: x.ID, Status: st, Error: msg,
			Next: won[0].NextStartTime.Add(time.Second), NextAttempt: 1, Cron: won[0].Cron, Revision: won[0].Revision, // one run per fire time
		}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("finish: %v %v", err, res)
		}
		ids = append(ids, x.ID)
	}
	return ids
}
