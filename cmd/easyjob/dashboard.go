package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/dsn"
	"github.com/easyjob-go/easyjob/easyjob/dashboard"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// The basic-auth credentials of the dashboard come from the environment,
// never from flags (which any user sees in ps).
const (
	envDashUser     = "EASYJOB_DASHBOARD_USER"
	envDashPassword = "EASYJOB_DASHBOARD_PASSWORD"
)

// dashboardCommand is `easyjob dashboard`: the web dashboard of one group,
// served until interrupted.
func dashboardCommand(ctx context.Context, args []string) int {
	return runDashboard(ctx, args, os.Stdout, os.Stderr, nil)
}

// runDashboard serves the dashboard; ready, when not nil, receives the
// address it listens on (tests listen on port 0).
func runDashboard(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) int {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("dsn", "", "PostgreSQL DSN (default $EASYJOB_DSN, else "+dsn.Default+")")
	group := fs.String("group", "default", "task group")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	readOnly := fs.Bool("read-only", false, "show only: no trigger, pause, resume or reschedule")
	noAuth := fs.Bool("no-auth", false, "serve a non-loopback address without authentication")
	refresh := fs.Duration("refresh", 2*time.Second, "how often open pages refresh (and reads are reused)")
	window := fs.Duration("window", 5*time.Minute, "span of the timeline of recent fires")
	liveAfter := fs.Duration("live-after", 0, "a node is live while its heartbeat is this recent (default 2s, the library's)")
	deadAfter := fs.Duration("dead-after", 0, "a node silent this long is dead (default 3s, the library's)")
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "easyjob dashboard: %s\n", errorLine(err, *server))
		return code
	}
	pos, err := parseArgs(fs, args)
	if *server == "" {
		*server = dsn.FromEnv()
	}
	if errors.Is(err, flag.ErrHelp) {
		printDashboardUsage(fs, stderr)
		return exitOK
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("want no arguments, got %d", len(pos))
	}
	if err != nil {
		return fail(exitUsage, fmt.Errorf("%w (see 'easyjob dashboard -h')", err))
	}
	user, password := os.Getenv(envDashUser), os.Getenv(envDashPassword)
	if (user == "") != (password == "") {
		return fail(exitUsage, fmt.Errorf("set both %s and %s, or neither", envDashUser, envDashPassword))
	}
	if user == "" && !*noAuth && !loopback(*addr) {
		return fail(exitUsage, fmt.Errorf("%s is not a loopback address: set %s and %s for basic auth, or pass --no-auth",
			*addr, envDashUser, envDashPassword))
	}

	e := &env{out: stdout, group: *group, liveAfter: *liveAfter, deadAfter: *deadAfter}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = e.open(openCtx, *server, false)
	cancel()
	if err != nil {
		return fail(exitCode(err), err)
	}
	defer e.close()

	var h http.Handler = dashboard.New(e.client, dashboard.Options{ReadOnly: *readOnly, Refresh: *refresh, Window: *window})
	if user != "" {
		h = dashboard.BasicAuth(h, "easyjob "+*group, user, password)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *addr)
	if err != nil {
		return fail(exitFailed, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	mode := "actions allowed"
	if *readOnly {
		mode = "read-only"
	}
	auth := "basic auth from $" + envDashUser
	if user == "" {
		auth = "no authentication"
	}
	fmt.Fprintf(stdout, "easyjob dashboard: group %q of %s on http://%s/ (%s, %s)\n",
		*group, postgres.RedactDSN(*server), ln.Addr(), mode, auth)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err = <-done:
		return fail(exitFailed, err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fail(exitFailed, err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fail(exitFailed, err)
	}
	return exitOK
}

// loopback reports whether addr (host:port) listens on a loopback address
// only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func printDashboardUsage(fs *flag.FlagSet, w io.Writer) {
	fs.SetOutput(w)
	fmt.Fprintf(w, `usage: easyjob dashboard [flags]

Serve the web dashboard of a group: overview, tasks, task pages with their
chain and runs, nodes, a timeline of recent fires; trigger, pause, resume
and reschedule (unless --read-only). Pages refresh by themselves; any
number of open pages cost the database a few queries per --refresh.

Basic auth: set %s and %s in the environment (never on the command line).
Without them the dashboard listens only on a loopback address, unless
--no-auth.

flags:
`, envDashUser, envDashPassword)
	fs.PrintDefaults()
}
