package easyjob

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

type echoArgs struct {
	N int `json:"n"`
}

// echoes records what each run of the echo handler saw.
type echoes struct {
	mu   sync.Mutex
	runs []echoRun
}

type echoRun struct {
	task string
	n    int
	args string
}

func (e *echoes) handler() Handler {
	return HandlerOf(func(ctx context.Context, a echoArgs) error {
		info, _ := InfoFromContext(ctx)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.runs = append(e.runs, echoRun{task: info.Task, n: a.N, args: string(info.Args)})
		return nil
	})
}

// count is how many times task ran.
func (e *echoes) count(task string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := 0
	for _, r := range e.runs {
		if r.task == task {
			k++
		}
	}
	return k
}

// saw reports whether task ran with argument n.
func (e *echoes) saw(task string, n int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runs {
		if r.task == task && r.n == n {
			return true
		}
	}
	return false
}

// bothStores are the stores a test runs on: the in-memory default and
// PostgreSQL (a group of the test's own on the shared database).
var bothStores = []struct {
	name  string
	store func(t *testing.T) (repository.Store, string)
}{
	{"memory", func(t *testing.T) (repository.Store, string) { return memory.New(), "g" }},
	{"postgres", func(t *testing.T) (repository.Store, string) { return pgStore(t) }},
}

// liveClient returns a client of group once its one node is live (its
// handlers published and its task set seen by the checks of Create).
func liveClient(t *testing.T, store repository.Store, group string) *Client {
	t.Helper()
	ctx := context.Background()
	c, err := NewClient(ctx, Config{Store: store, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the node to be live", func() bool {
		ns, _ := c.Nodes(ctx)
		return len(ns) == 1 && ns[0].Live
	})
	return c
}

// echoGroup starts a node of group on store with the echo handler and
// returns what its runs see and a client once the node is live.
func echoGroup(t *testing.T, store repository.Store, group string) (*echoes, *Client) {
	t.Helper()
	seen := &echoes{}
	start(t, fastConfig(store, group), func(s *Scheduler) {
		if err := s.Handle("echo", seen.handler()); err != nil {
			t.Fatal(err)
		}
	})
	return seen, liveClient(t, store, group)
}

// TestRuntimeSchedules is issue 25's walk-through on both stores: a
// handler registered by kind, schedules created, triggered with their own
// arguments, updated and removed at runtime from a client, every step
// seen by the running node without a restart; bad input refused with
// nothing written.
func TestRuntimeSchedules(t *testing.T) {
	for _, tc := range bothStores {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, group := tc.store(t)
			seen, c := echoGroup(t, store, group)

			info, err := c.Create(ctx, Schedule{Name: "e1", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if !info.Dynamic || info.Handler != "echo" || string(info.Args) != `{"n": 1}` && string(info.Args) != `{"n":1}` {
				t.Fatalf("created %+v, want a dynamic schedule of handler echo with its args", info)
			}
			waitFor(t, 5*time.Second, "e1 to run with n=1", func() bool { return seen.saw("e1", 1) })

			if _, err := c.Trigger(ctx, "e1", WithArgs(json.RawMessage(`{"n":2}`))); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the trigger to run e1 with n=2", func() bool { return seen.saw("e1", 2) })
			waitFor(t, 5*time.Second, "history to show both runs", func() bool {
				xs, _ := c.History(ctx, "e1", HistoryFilter{})
				var cron, manual bool
				for _, x := range xs {
					var a echoArgs
					_ = json.Unmarshal(x.Args, &a)
					cron = cron || x.Kind == RunCron && a.N == 1
					manual = manual || x.Kind == RunManual && a.N == 2
				}
				return cron && manual
			})

			// Refused, nothing written.
			for _, bad := range []struct {
				s    Schedule
				opts []CreateOption
				want error
				says string
			}{
				{Schedule{Name: "e2", Handler: "echo", Cron: "* * * * * *", Args: json.RawMessage(`{"n":"x"}`)}, nil, ErrInvalidArgs, `args.n: want integer (int), got string "x"`},
				{Schedule{Name: "e2", Handler: "echo", Cron: "* * * * * *", Args: json.RawMessage(`{"m":1}`)}, nil, ErrInvalidArgs, `unknown field "m"`},
				{Schedule{Name: "e2", Handler: "nope", Cron: "* * * * * *"}, nil, ErrUnknownHandler, `handler "nope"`},
				{Schedule{Name: "e2", Handler: "echo", Cron: "61 * * * * *"}, nil, ErrInvalidCron, `schedule "e2"`},
				{Schedule{Name: "e2", Handler: "echo", Cron: ""}, nil, ErrInvalidCron, `needs a cron`},
				{Schedule{Name: "e2", Handler: "echo", Cron: "* * * * * *", Options: []Option{Parent("e1")}}, nil, ErrInvalidOption, `Parent`},
				{Schedule{Name: "e1", Handler: "echo", Cron: "* * * * * *"}, nil, ErrTaskExists, `e1`},
				{Schedule{Name: " e2", Handler: "echo", Cron: "* * * * * *"}, nil, ErrInvalidName, `schedule`},
			} {
				_, err := c.Create(ctx, bad.s, bad.opts...)
				if !errors.Is(err, bad.want) || !strings.Contains(err.Error(), bad.says) {
					t.Errorf("Create(%+v) = %v, want %v saying %q", bad.s, err, bad.want, bad.says)
				}
				if _, err := c.Task(ctx, "e2"); bad.s.Name == "e2" && !errors.Is(err, ErrTaskNotFound) {
					t.Errorf("Create(%+v) wrote the row (Task: %v)", bad.s, err)
				}
			}
			// A batch is all or nothing.
			if _, err := c.CreateMany(ctx, []Schedule{
				{Name: "b1", Handler: "echo", Cron: "0 0 * * * *"},
				{Name: "e1", Handler: "echo", Cron: "0 0 * * * *"},
			}); !errors.Is(err, ErrTaskExists) {
				t.Fatalf("a batch with a taken name: %v, want ErrTaskExists", err)
			}
			if _, err := c.Task(ctx, "b1"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("a failed batch wrote b1 (Task: %v)", err)
			}
			// An unknown handler, allowed: written, waiting.
			if _, err := c.Create(ctx, Schedule{Name: "w1", Handler: "later", Cron: "* * * * * *"}, AllowUnknownHandler()); err != nil {
				t.Fatalf("an allowed unknown handler: %v", err)
			}

			// Update: the new arguments from the next fire on.
			if _, err := c.Update(ctx, Schedule{Name: "e1", Handler: "echo", Cron: "* * * * * *", Args: echoArgs{N: 3}}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "e1 to run with the updated n=3", func() bool { return seen.saw("e1", 3) })
			if got, _ := c.Task(ctx, "e1"); got.Revision < 2 {
				t.Fatalf("revision after an update: %d, want >= 2", got.Revision)
			}

			// A one-off: runs once at its time, recorded, then finished.
			now, _ := store.Now(ctx)
			if _, err := c.Create(ctx, Schedule{Name: "once", Handler: "echo", At: now.Add(1500 * time.Millisecond), Args: echoArgs{N: 9}}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the one-off to run and finish", func() bool {
				got, _ := c.Task(ctx, "once")
				return seen.saw("once", 9) && got.Status == repository.TaskFinished
			})
			// A one-off has no next fire: no successor may be queued for it
			// (one would run the same fire again before the finish lands).
			if k := seen.count("once"); k != 1 {
				t.Fatalf("the one-off ran %d times, want once", k)
			}
			if xs, _ := c.History(ctx, "once", HistoryFilter{}); len(xs) != 1 || xs[0].Status != repository.ExecSucceeded {
				t.Fatalf("one-off history: %+v, want one succeeded run", xs)
			}
			if _, err := c.Create(ctx, Schedule{Name: "past", Handler: "echo", At: now.Add(-time.Minute)}); !errors.Is(err, ErrInvalidCron) || !strings.Contains(err.Error(), "has passed") {
				t.Fatalf("a one-off in the past: %v, want ErrInvalidCron saying it has passed", err)
			}

			if _, err := c.Remove(ctx, "e1", RemoveOptions{}); err != nil {
				t.Fatalf("remove a runtime schedule its handler's node runs: %v", err)
			}
			if _, err := c.Task(ctx, "e1"); !errors.Is(err, ErrTaskNotFound) {
				t.Fatalf("after remove: %v, want ErrTaskNotFound", err)
			}
		})
	}
}
