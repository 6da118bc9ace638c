package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// This example runs one node on an in-memory store with a task that fires
// every second, and stops it after the first run.
func ExampleNew() {
	s, err := easyjob.New(easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan string, 1)
	err = s.Register("tick", "* * * * * *", func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		select { // the job may run again before Run has stopped
		case ran <- info.Task:
		default:
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case name := <-ran:
		fmt.Println("ran", name)
	case err := <-done:
		fmt.Println("Run failed:", err)
		cancel()
		return
	}
	cancel() // graceful shutdown: Run waits for running jobs, then returns nil
	fmt.Println("Run returned", <-done)
	// Output:
	// ran tick
	// Run returned <nil>
}

// The package-level Register and Run work like http.HandleFunc and
// http.ListenAndServe: tasks go to a default scheduler. A zero Config runs
// on a private in-memory store.
func ExampleRegister() {
	ran := make(chan struct{}, 1)
	err := easyjob.Register("hello", "* * * * * *", func(ctx context.Context) error {
		select {
		case ran <- struct{}{}:
		default:
		}
		return nil
	})
	fmt.Println("register:", err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- easyjob.Run(ctx, easyjob.Config{}) }()
	select {
	case <-ran:
		fmt.Println("hello ran")
	case err := <-done:
		fmt.Println("Run failed:", err)
	}
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// register: <nil>
	// hello ran
	// Run returned <nil>
}

// A child task runs on the same worker right after each successful run of
// its parent. With an empty cron it runs after every parent success.
func ExampleParent() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	events := make(chan string, 10)
	job := func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		select {
		case events <- info.Task:
		default:
		}
		return nil
	}
	fmt.Println(s.Register("report", "* * * * * *", job))
	fmt.Println(s.Register("mail", "", job, easyjob.Parent("report")))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Println(<-events, "then", <-events)
	cancel()
	if err := <-done; err != nil {
		fmt.Println("run:", err)
	}

	// A parent that is not registered is reported by Run, before anything
	// is written.
	s2, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	_ = s2.Register("orphan", "", job, easyjob.Parent("nobody"))
	err := s2.Run(context.Background())
	fmt.Println(errors.Is(err, easyjob.ErrUnknownParent))
	// Output:
	// <nil>
	// <nil>
	// report then mail
	// true
}

// Timeout gives every run a deadline through its context.
func ExampleTimeout() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	seen := make(chan error, 1)
	_ = s.Register("slow", "* * * * * *", func(ctx context.Context) error {
		<-ctx.Done() // a well-behaved job stops when its context ends
		select {
		case seen <- ctx.Err():
		default:
		}
		return ctx.Err()
	}, easyjob.Timeout(50*time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Println("job saw:", <-seen)
	cancel()
	if err := <-done; err != nil {
		fmt.Println("run:", err)
	}

	// Register checks options at once.
	s2, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	noop := func(context.Context) error { return nil }
	fmt.Println(errors.Is(s2.Register("bad", "* * * * *", noop, easyjob.Timeout(0)), easyjob.ErrInvalidOption))
	// Output:
	// job saw: context deadline exceeded
	// true
}

// Retry re-runs a failed fire after a backoff; the attempt number is in
// the run's Info.
func ExampleRetry() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	attempts := make(chan string, 10)
	_ = s.Register("flaky", "* * * * * *", func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		if info.Attempt == 1 {
			attempts <- "attempt 1: failed"
			return errors.New("flaky")
		}
		attempts <- fmt.Sprintf("attempt %d: ok", info.Attempt)
		return nil
	}, easyjob.Retry(2, 10*time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Println(<-attempts)
	fmt.Println(<-attempts)
	cancel()
	if err := <-done; err != nil {
		fmt.Println("run:", err)
	}
	// Output:
	// attempt 1: failed
	// attempt 2: ok
}

// TZ evaluates the cron expression in a time zone; a "CRON_TZ=" prefix
// does the same. Fire times are stored in UTC.
func ExampleTZ() {
	store := memory.New()
	s, _ := easyjob.New(easyjob.Config{Store: store, Group: "tz"})
	noop := func(context.Context) error { return nil }
	fmt.Println(s.Register("morning", "0 9 * * *", noop, easyjob.TZ("Asia/Tokyo")))
	fmt.Println(s.Register("evening", "CRON_TZ=Europe/Paris 0 18 * * *", noop))
	err := s.Register("nowhere", "0 9 * * *", noop, easyjob.TZ("Mars/Olympus_Mons"))
	fmt.Println(errors.Is(err, easyjob.ErrInvalidOption))

	// Run the valid ones on a fresh scheduler and read the stored schedule.
	s, _ = easyjob.New(easyjob.Config{Store: store, Group: "tz"})
	_ = s.Register("morning", "0 9 * * *", noop, easyjob.TZ("Asia/Tokyo"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	for {
		task, err := store.Task(ctx, "tz", "morning")
		if err == nil {
			fmt.Println("next fire:", task.NextStartTime.In(tokyo).Format("15:04 MST"), "=", task.NextStartTime.UTC().Format("15:04 MST"))
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		fmt.Println("run:", err)
	}
	// Output:
	// <nil>
	// <nil>
	// true
	// next fire: 09:00 JST = 00:00 UTC
}

// Misfire chooses what a fire found late (every node was down) does: run
// once now (the default), skip to the next fire, or catch up on at most n
// missed fires.
func ExampleMisfire() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	noop := func(context.Context) error { return nil }

	// A report that is useless when late: skip fires more than a minute late.
	fmt.Println(s.Register("dashboard", "*/5 * * * *", noop, easyjob.Misfire(easyjob.Skip(), time.Minute)))
	// Hourly billing must not lose a fire: run up to 24 missed ones.
	fmt.Println(s.Register("billing", "0 * * * *", noop, easyjob.Misfire(easyjob.CatchUp(24), 0)))
	// The default, spelled out.
	fmt.Println(s.Register("cleanup", "0 3 * * *", noop, easyjob.Misfire(easyjob.FireOnceNow(), 0)))

	err := s.Register("bad", "0 * * * *", noop, easyjob.Misfire(easyjob.CatchUp(0), 0))
	fmt.Println(errors.Is(err, easyjob.ErrInvalidOption))
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// true
}

// InfoFromContext gives a job its execution's metadata.
func ExampleInfoFromContext() {
	s, _ := easyjob.New(easyjob.Config{Store: memory.New()})
	infos := make(chan easyjob.Info, 1)
	_ = s.Register("tick", "* * * * * *", func(ctx context.Context) error {
		info, ok := easyjob.InfoFromContext(ctx)
		if ok {
			select {
			case infos <- info:
			default:
			}
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	info := <-infos
	cancel()
	if err := <-done; err != nil {
		fmt.Println("run:", err)
	}

	fmt.Println("task:", info.Task)
	fmt.Println("attempt:", info.Attempt)
	fmt.Println("scheduled on a whole second:", info.ScheduledAt.Equal(info.ScheduledAt.Truncate(time.Second)))
	fmt.Println("token names the task:", info.Token.TaskID == info.TaskID)
	fmt.Println("ran on a node:", info.NodeID != 0)

	_, ok := easyjob.InfoFromContext(context.Background())
	fmt.Println("outside a job:", ok)
	// Output:
	// task: tick
	// attempt: 1
	// scheduled on a whole second: true
	// token names the task: true
	// ran on a node: true
	// outside a job: false
}

func ExampleToken_String() {
	tok := easyjob.Token{TaskID: 42, Version: 7}
	fmt.Println(tok)
	// Output: 42/7
}

// InTx makes a job's writes and its run's finish one transaction: a
// fire's invoice is inserted exactly once, even when the node dies, is
// cut off or loses its claim mid-run (the transaction rolls back and the
// fire runs again elsewhere). It needs a PostgreSQL store.
func ExampleInTx() {
	s, err := easyjob.New(easyjob.Config{DSN: "postgres://localhost/app"})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.Register("invoice", "0 0 2 * * *", func(ctx context.Context) error {
		tx, _ := easyjob.Tx(ctx)
		info, _ := easyjob.InfoFromContext(ctx)
		_, err := tx.ExecContext(ctx, "INSERT INTO invoices (day) VALUES ($1)", info.ScheduledAt)
		return err // an error rolls the insert back; the run is recorded failed
	}, easyjob.InTx())
	if err != nil {
		fmt.Println(err)
	}
}

// EveryFromCreation anchors an @every grid at the task's creation: with
// "@every 1h", a task created at 10:00:07 fires at 11:00:07, 12:00:07, ...
func ExampleEveryFromCreation() {
	s, err := easyjob.New(easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = s.Register("sync", "@every 1h", func(ctx context.Context) error { return nil },
		easyjob.EveryFromCreation())
	fmt.Println(err)
	// Output: <nil>
}
