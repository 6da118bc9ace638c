package easyjob

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// TestInTxExactlyOnce: a job registered with InTx writes through Tx(ctx),
// and its writes commit with its fenced finish or not at all (issue 30,
// item 13). A succeeded run's write is there once per recorded run; a
// failed run's is rolled back; a run that lost its claim while it ran (a
// peer recovered the fire) is rolled back and recorded fenced, and the
// fire's next run writes it once.
func TestInTxExactlyOnce(t *testing.T) {
	pg, group := pgStore(t)
	admin := pgStoreAdmin(t)
	ctx := context.Background()
	table := "intx_" + fmt.Sprint(time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE TABLE "+table+" (task text, fire timestamptz, UNIQUE (task, fire))"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP TABLE "+table) })
	write := func(ctx context.Context) error {
		tx, ok := Tx(ctx)
		if !ok {
			return errors.New("no transaction in an InTx job")
		}
		info, _ := InfoFromContext(ctx)
		_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES ($1, $2)", info.Task, info.ScheduledAt)
		return err
	}
	var fenceOnce atomic.Bool
	start(t, fastConfig(pg, group), func(s *Scheduler) {
		must(t, s.Register("ok", "* * * * * *", func(ctx context.Context) error {
			time.Sleep(30 * time.Millisecond) // a run that takes time: its row must say so
			return write(ctx)
		}, InTx()))
		must(t, s.Register("fails", "* * * * * *", func(ctx context.Context) error {
			if err := write(ctx); err != nil {
				return err
			}
			return errors.New("the job fails after its write")
		}, InTx()))
		must(t, s.Register("fenced", "* * * * * *", func(ctx context.Context) error {
			if err := write(ctx); err != nil {
				return err
			}
			if fenceOnce.CompareAndSwap(false, true) {
				// A peer's recovery, as the database sees it: the version moves.
				info, _ := InfoFromContext(ctx)
				if _, err := admin.ExecContext(ctx, "UPDATE easyjob_tasks SET version = version + 1, status = 'pending', node_id = NULL WHERE id = $1", info.TaskID); err != nil {
					return err
				}
			}
			return nil
		}, InTx()))
		must(t, s.Register("plain", "* * * * * *", func(ctx context.Context) error {
			if _, ok := Tx(ctx); ok {
				return errors.New("a transaction in a job not registered with InTx")
			}
			return nil
		}))
	})
	c, err := NewClient(ctx, Config{Store: pg, Group: group})
	must(t, err)
	runs := func(name string, st repository.ExecStatus) []ExecutionInfo {
		xs, err := c.History(ctx, name, HistoryFilter{Status: st})
		must(t, err)
		return xs
	}
	written := func(name string) map[time.Time]bool {
		rows, err := admin.QueryContext(ctx, "SELECT fire FROM "+table+" WHERE task = $1", name)
		must(t, err)
		defer rows.Close()
		out := map[time.Time]bool{}
		for rows.Next() {
			var at time.Time
			must(t, rows.Scan(&at))
			out[at.UTC()] = true
		}
		must(t, rows.Err())
		return out
	}
	waitFor(t, 15*time.Second, "three runs of each and the fenced one", func() bool {
		return len(runs("ok", repository.ExecSucceeded)) >= 3 && len(runs("fails", repository.ExecFailed)) >= 3 &&
			len(runs("fenced", repository.ExecFenced)) == 1 && len(runs("fenced", repository.ExecSucceeded)) >= 2 &&
			len(runs("plain", repository.ExecSucceeded)) >= 1
	})
	if x := runs("plain", repository.ExecFailed); len(x) > 0 {
		t.Fatalf("plain job: %s", x[0].Error)
	}
	ok := written("ok")
	for _, x := range runs("ok", repository.ExecSucceeded) {
		if !ok[x.ScheduledAt.UTC()] {
			t.Errorf("succeeded run of %v has no write", x.ScheduledAt)
		}
		// The finish runs in a transaction begun before the job: its row
		// still ends when the job did, not when the transaction began.
		if d := x.Duration(); d < 25*time.Millisecond {
			t.Errorf("run of %v took %v by its row; the job took 30 ms", x.ScheduledAt, d)
		}
	}
	if w := written("fails"); len(w) != 0 {
		t.Errorf("failed runs left %d writes; want every one rolled back", len(w))
	}
	// The fenced run's write was rolled back: the fire ran again and its
	// write, under the same unique (task, fire), committed then.
	fenced := runs("fenced", repository.ExecFenced)[0]
	waitFor(t, 15*time.Second, "the fenced fire run again", func() bool {
		for _, x := range runs("fenced", repository.ExecSucceeded) {
			if x.ScheduledAt.Equal(fenced.ScheduledAt) {
				return true
			}
		}
		for _, x := range runs("fenced", repository.ExecFailed) {
			if x.ScheduledAt.Equal(fenced.ScheduledAt) {
				t.Fatalf("the fenced fire's second run failed (its first run's write committed?): %s", x.Error)
			}
		}
		return false
	})
	w := written("fenced")
	for _, x := range runs("fenced", repository.ExecSucceeded) {
		if !w[x.ScheduledAt.UTC()] {
			t.Errorf("succeeded run of %v has no write", x.ScheduledAt)
		}
	}
	if got, want := len(w), len(runs("fenced", repository.ExecSucceeded)); got > want+1 { // one may be committing now
		t.Errorf("%d writes for %d succeeded runs", got, want)
	}
}

// TestInTxRefused: InTx needs transactions (not the in-memory store) and
// a task that runs alone (not a chain's).
func TestInTxRefused(t *testing.T) {
	ctx := context.Background()
	s, err := New(Config{Store: memory.New(), Group: "g"})
	must(t, err)
	must(t, s.Register("x", "* * * * * *", func(context.Context) error { return nil }, InTx()))
	if err := s.Run(ctx); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Run with InTx on the memory store = %v, want ErrInvalidConfig", err)
	}
	pg, group := pgStore(t)
	s, err = New(Config{Store: pg, Group: group})
	must(t, err)
	must(t, s.Register("a", "* * * * * *", func(context.Context) error { return nil }, InTx()))
	must(t, s.Register("b", "", func(context.Context) error { return nil }, Parent("a")))
	if err := s.Run(ctx); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Run with InTx on a chain's root = %v, want ErrInvalidOption", err)
	}
}
