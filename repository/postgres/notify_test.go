package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// waitListening waits until some session of the database is LISTENing, so
// a notification sent afterwards cannot race the subscription.
func waitListening(t *testing.T, s *postgres.Store) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := s.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND query = 'LISTEN easyjob' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("listener never subscribed")
}

func TestNotifyTriggerWakesListenerOnAnotherStore(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	writer := pgtest.OpenStore(t, dsn)
	listener := pgtest.OpenStore(t, dsn)
	ctx := context.Background()

	now, err := writer.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"mine", "other"} {
		if _, err := writer.UpsertTasks(ctx, g, []repository.TaskDef{
			{Name: "report", Cron: "0 * * * * *", NextStartTime: now.Add(time.Hour)},
		}); err != nil {
			t.Fatal(err)
		}
	}

	wakes := make(chan struct{}, 16)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- listener.Listen(lctx, "mine", func() { wakes <- struct{}{} })
	}()
	waitListening(t, writer)

	// Another group's notification must not wake this listener.
	if _, err := writer.Trigger(ctx, "other", "report", ""); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := writer.Trigger(ctx, "mine", "report", ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wakes:
		t.Logf("woken after %v", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("Trigger did not wake the listener within a second")
	}
	select {
	case <-wakes:
		t.Fatal("woken twice: the other group's notification leaked through")
	case <-time.After(200 * time.Millisecond):
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Listen returned %v after cancel, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen did not return after cancel")
	}
}

func TestListenReportsBrokenConnection(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s := pgtest.OpenStore(t, dsn)
	admin := pgtest.OpenStore(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- s.Listen(ctx, "g", func() {}) }()
	waitListening(t, admin)
	if _, err := admin.DB().ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND query = 'LISTEN easyjob'`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Listen returned nil on a killed connection, want an error")
		}
		t.Logf("Listen: %v", err)
	case <-ctx.Done():
		t.Fatal("Listen did not notice its connection died")
	}
}

// TestListenEndsOnSilentPath: a LISTEN session whose path goes silent
// (no reset) ends with an error after one probe instead of waiting
// forever, so the node restarts it once the path heals (issue 30, item 3).
func TestListenEndsOnSilentPath(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	direct := pgtest.OpenStore(t, dsn)
	path, via := pgtest.NewSilentPath(t, dsn)
	listener := pgtest.OpenStore(t, via)
	postgres.SetListenProbe(listener, 300*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- listener.Listen(ctx, "g", func() {}) }()
	waitListening(t, direct)
	// Quiet but healthy: the probe answers and the session goes on.
	select {
	case err := <-done:
		t.Fatalf("Listen returned on a healthy, quiet path: %v", err)
	case <-time.After(time.Second):
	}
	path.Silence()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Listen returned nil on a silent path, want an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Listen still waiting 5s after its path went silent")
	}
}
