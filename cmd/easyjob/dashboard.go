package main

import (
	"context"
	"crypto/tls"
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
	group := fs.String("group", "", "serve this group only (default: every group of the database, the only one or \"default\" at /)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	readOnly := fs.Bool("read-only", false, "show only: no trigger, pause, resume or reschedule")
	noAuth := fs.Bool("no-auth", false, "serve a non-loopback address without authentication")
	refresh := fs.Duration("refresh", 2*time.Second, "how often open pages refresh (and reads are reused)")
	window := fs.Duration("window", 5*time.Minute, "span of the timeline of recent fires")
	liveAfter := fs.Duration("live-after", 0, "a node is live while its heartbeat is this recent (default 2s, the library's)")
	deadAfter := fs.Duration("dead-after", 0, "a node silent this long is dead (default 3s, the library's)")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (chain) file; needs --tls-key")
	tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
	usersFile := fs.String("users", "", "sign-in users, one a line: name:role:bcrypt-hash, role viewer or operator")
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
	if (*tlsCert == "") != (*tlsKey == "") {
		return fail(exitUsage, errors.New("give both --tls-cert and --tls-key, or neither"))
	}
	users, err := dashboardUsers(*usersFile, os.Getenv)
	if err != nil {
		return fail(exitUsage, err)
	}
	if users == nil && !*noAuth && !loopback(*addr) {
		return fail(exitUsage, fmt.Errorf("%s is not a loopback address: give --users FILE or set %s and %s for basic auth, or pass --no-auth",
			*addr, envDashUser, envDashPassword))
	}
	var cert tls.Certificate
	if *tlsCert != "" {
		if cert, err = tls.LoadX509KeyPair(*tlsCert, *tlsKey); err != nil {
			return fail(exitUsage, fmt.Errorf("--tls-cert/--tls-key: %w", err))
		}
	}

	e := &env{out: stdout, group: *group, liveAfter: *liveAfter, deadAfter: *deadAfter}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = e.openHome(openCtx, *server)
	cancel()
	if err != nil {
		return fail(exitCode(err), err)
	}
	defer e.close()

	opts := dashboard.Options{ReadOnly: *readOnly, Refresh: *refresh, Window: *window, AllGroups: *group == ""}
	if users != nil {
		opts.CanAct = users.CanAct
	}
	var h http.Handler = dashboard.New(e.client, opts)
	if users != nil {
		h = users.Wrap(h, "easyjob")
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *addr)
	if err != nil {
		return fail(exitFailed, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	scheme := "http"
	if *tlsCert != "" {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
		scheme = "https"
	}
	mode := "actions allowed"
	if *readOnly {
		mode = "read-only"
	}
	auth := "no authentication"
	if users != nil {
		auth = fmt.Sprintf("basic auth: %d user(s), %d operator(s)", users.Len(), users.Operators())
	}
	served := fmt.Sprintf("group %q", e.group)
	if *group == "" {
		served = fmt.Sprintf("every group (%q at /, all at /groups)", e.group)
	}
	fmt.Fprintf(stdout, "easyjob dashboard: %s of %s on %s://%s/ (%s, %s)\n",
		served, postgres.RedactDSN(*server), scheme, ln.Addr(), mode, auth)
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

// openHome opens e like an operator command, but a database of several
// groups is no error: the dashboard serves them all, "default" at /.
func (e *env) openHome(ctx context.Context, dsn string) error {
	if e.group != "" {
		return e.open(ctx, dsn, false)
	}
	err := e.open(ctx, dsn, false)
	if errors.Is(err, errSeveralGroups) {
		e.group = "default"
		return e.open(ctx, dsn, false)
	}
	return err
}

// dashboardUsers reads the users of --users and of the environment
// (EASYJOB_DASHBOARD_USER and _PASSWORD: one operator); nil when there are
// none.
func dashboardUsers(file string, getenv func(string) string) (*dashboard.Users, error) {
	user, password := getenv(envDashUser), getenv(envDashPassword)
	if (user == "") != (password == "") {
		return nil, fmt.Errorf("set both %s and %s, or neither", envDashUser, envDashPassword)
	}
	users := dashboard.NewUsers()
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--users: %w", err)
		}
		defer f.Close()
		if users, err = dashboard.ParseUsers(f); err != nil {
			return nil, fmt.Errorf("--users %s: %w", file, err)
		}
	}
	if user != "" {
		if err := users.AddPassword(user, dashboard.RoleOperator, password); err != nil {
			return nil, fmt.Errorf("%s: %w", envDashUser, err)
		}
	}
	if users.Len() == 0 {
		if file != "" {
			return nil, fmt.Errorf("--users %s lists no user", file)
		}
		return nil, nil
	}
	return users, nil
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

Without --group it serves every group of the database: a switcher on
every page, the all-groups overview at /groups, the group's pages under
/g/NAME/, and at / the only group (or "default").

Users (HTTP basic auth): --users FILE, one user a line, name:role:hash
with role viewer (reads only) or operator (also acts) and hash a bcrypt
hash (htpasswd -nbB NAME PASSWORD prints name:hash); and/or %s and
%s in the environment (never on the command line) for one
operator. The audit log records actions under the user's name. Without
users the dashboard listens only on a loopback address, unless --no-auth.

HTTPS: --tls-cert and --tls-key (PEM files), both or neither.

flags:
`, envDashUser, envDashPassword)
	fs.PrintDefaults()
}
