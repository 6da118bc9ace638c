package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestDashboardCommand serves a group's dashboard on a free port, with
// basic auth from the environment and --read-only, then stops on cancel.
func TestDashboardCommand(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	store := pgtest.OpenStore(t, dsn)
	ctx := t.Context()
	now, err := store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpsertTasks(ctx, "dash-cmd", []repository.TaskDef{
		{Name: "nightly <b>", Cron: "0 0 3 * * *", NextStartTime: now.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envDashUser, "ops")
	t.Setenv(envDashPassword, "pa55word")

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stdout, stderr bytes.Buffer
	ready, done := make(chan string, 1), make(chan int, 1)
	go func() {
		done <- runDashboard(runCtx, []string{"--dsn", dsn, "--group", "dash-cmd", "--addr", "127.0.0.1:0", "--read-only"},
			&stdout, &stderr, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("dashboard exited %d before serving: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("dashboard did not start within 30s")
	}
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/tasks", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := get("ops", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	code, body := get("ops", "pa55word")
	if code != http.StatusOK || !strings.Contains(body, "nightly &lt;b&gt;") || !strings.Contains(body, "read-only") ||
		strings.Contains(body, `method="post"`) {
		t.Errorf("with credentials: %d; want the read-only task list:\n%s", code, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after cancel, want 0: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dashboard did not stop within 10s of cancel")
	}
	if out := stdout.String(); !strings.Contains(out, "http://"+addr+"/") || strings.Contains(out, "pa55word") {
		t.Errorf("banner %q: want the address and no password", out)
	}
}

// TestDashboardCommandRefuses: bad usage exits 2 before anything is served.
func TestDashboardCommandRefuses(t *testing.T) {
	for _, c := range []struct {
		name       string
		user, pass string
		args       []string
		want       string
	}{
		{"half the credentials", "ops", "", []string{"--addr", "127.0.0.1:0"}, "set both"},
		{"public without auth", "", "", []string{"--addr", "0.0.0.0:0"}, "not a loopback address"},
		{"an argument", "", "", []string{"extra"}, "want no arguments"},
		{"an unknown flag", "", "", []string{"--password", "x"}, "flag provided but not defined"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envDashUser, c.user)
			t.Setenv(envDashPassword, c.pass)
			var stdout, stderr bytes.Buffer
			code := runDashboard(t.Context(), c.args, &stdout, &stderr, nil)
			if code != exitUsage || !strings.Contains(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr.String(), c.want)
			}
		})
	}
	var stderr bytes.Buffer
	if code := runDashboard(t.Context(), []string{"-h"}, io.Discard, &stderr, nil); code != exitOK ||
		!strings.Contains(stderr.String(), envDashPassword) {
		t.Errorf("-h: exit %d, usage %q", code, stderr.String())
	}
}
