package dashboard

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestResumeOnTime: a task resumed from the dashboard fires its next fire
// on time, although its node is idle then (its only task paused, nothing
// due within FetchWindow: the loader waits FetchWindow − PollInterval,
// 4 s by default, between passes): Resume notifies the group, which wakes
// every loader at once. The node runs with the default intervals.
func TestResumeOnTime(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	store := pgtest.OpenStore(t, dsn)
	s, err := easyjob.New(easyjob.Config{Store: store, Group: "resume", NodeName: "n1", SkipMigrate: true, Slog: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	started := map[time.Time]time.Time{} // scheduled → started, by the database clock
	fired := make(chan time.Time, 16)
	err = s.Register("six", "*/6 * * * * *", func(ctx context.Context) error {
		info, _ := easyjob.InfoFromContext(ctx)
		mu.Lock()
		started[info.ScheduledAt] = time.Now()
		mu.Unlock()
		fired <- info.ScheduledAt
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client, err := easyjob.NewClient(t.Context(), easyjob.Config{Store: store, Group: "resume", SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	dash := New(client, Options{})

	var first time.Time
	select {
	case first = <-fired:
	case <-time.After(20 * time.Second):
		t.Fatal("no first fire")
	}
	// Paused during a fire: its finish parks the row (the next fire, 6 s
	// later, is not claimed yet: FetchWindow is 5 s).
	act(t, dash, "pause", "six")
	waitUntil(t, "the task parked", func() bool {
		ti, err := client.Task(t.Context(), "six")
		return err == nil && ti.Status == "paused"
	})
	next := first.Add(6 * time.Second)
	offset := time.Since(first) - time.Since(started[first]) // database clock − local clock, about 0
	time.Sleep(time.Until(next.Add(-offset - 1500*time.Millisecond)))
	act(t, dash, "resume", "six")
	select {
	case at := <-fired:
		mu.Lock()
		late := started[at].Sub(at.Add(-offset))
		mu.Unlock()
		if !at.Equal(next) || late > 1200*time.Millisecond {
			t.Errorf("first fire after the resume: scheduled %s, %v late; want %s, within 1.2 s", at, late, next)
		}
		t.Logf("resumed 1.5 s before the fire at %s: it started %v after its time", next.Format("15:04:05"), late)
	case <-time.After(10 * time.Second):
		t.Fatal("no fire after the resume")
	}
	runs, err := client.History(t.Context(), "six", easyjob.HistoryFilter{Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].Kind != easyjob.RunCron || runs[0].Misfire != "" {
		t.Errorf("the run after the resume: %+v, %v; want a cron run, no misfire", runs, err)
	}
}

// act posts the dashboard action op on task name as a browser would
// (CSRF cookie and field), wanting its redirect.
func act(t *testing.T, h http.Handler, op, name string) {
	t.Helper()
	var tok string
	for _, c := range serve(h, newRequest(t, http.MethodGet, "/tasks", "")).Result().Cookies() {
		if c.Name == csrfCookie {
			tok = c.Value
		}
	}
	req := newRequest(t, http.MethodPost, "/action", url.Values{"op": {op}, "name": {name}, "csrf": {tok}}.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrfCookie, Value: tok})
	if code := serve(h, req).Code; code != http.StatusSeeOther {
		t.Fatalf("%s %s: %d", op, name, code)
	}
}
