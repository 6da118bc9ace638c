// Package pgbouncer runs a private PgBouncer (Debian's pgbouncer package,
// not a pooler of ours) in transaction pooling mode in front of a
// PostgreSQL server: the pooler many deployments put between their
// services and the database. The tests (pgtest.PgBouncer) and the chaos
// harness (easyjob chaos --pgbouncer) start one on a free loopback port
// and point the nodes at it.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options size the pooler. Zero values take the defaults.
type Options struct {
	// PoolSize is default_pool_size: the server connections per database
	// and user (default 20, one node's pool).
	PoolSize int
	// MaxClients is max_client_conn (default 500).
	MaxClients int
}

// Bouncer is one pgbouncer process in pool_mode=transaction, listening on
// 127.0.0.1:Port, with trust authentication for the server DSN's user and
// every database name forwarded to the same name on the server. Stop it
// (it is then waited for) when done; Restart kills it and starts it again
// on the same port.
type Bouncer struct {
	Port   int
	dir    string // ini, userlist, log; owned by the process's user
	bin    string
	server *pgx.ConnConfig
	cred   *syscall.Credential // the postgres OS user when run as root (pgbouncer refuses root)

	mu      sync.Mutex
	proc    *proc // the running process; nil once stopped
	stopped bool  // Stop was called: start no more
}

// proc is one run of the pgbouncer process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once waited for
}

// Find returns the path of the pgbouncer program: on PATH, else where
// Debian's package puts it (/usr/sbin, not on a non-root PATH).
func Find() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", errors.New("pgbouncer not found on PATH or in /usr/sbin: install Debian's pgbouncer package (apt-get install -y pgbouncer)")
}

// Start starts pgbouncer in front of the server of serverDSN (its host,
// port, user and password; the database is chosen by each client) and
// waits until it answers a query for serverDSN's database. On an error
// nothing is left running.
func Start(ctx context.Context, serverDSN string, o Options) (_ *Bouncer, err error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	server, err := pgx.ParseConfig(serverDSN)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: parse the server dsn: %w", err)
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 20
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 500
	}
	dir, err := os.MkdirTemp("", "easyjob-pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: %w", err)
	}
	b := &Bouncer{dir: dir, bin: bin, server: server}
	defer func() {
		if err != nil {
			b.Stop()
		}
	}()
	if os.Geteuid() == 0 {
		if b.cred, err = postgresUser(); err != nil {
			return nil, err
		}
	}
	if b.Port, err = freePort(ctx); err != nil {
		return nil, err
	}
	if err := b.writeFiles(o); err != nil {
		return nil, err
	}
	if err := b.start(); err != nil {
		return nil, err
	}
	if err := b.waitReady(ctx, 15*time.Second); err != nil {
		return nil, err
	}
	return b, nil
}

// postgresUser is the credential of the postgres OS user.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgbouncer refuses root and there is no postgres OS user to run it as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(ctx context.Context) (int, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgbouncer: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ini renders pgbouncer.ini for a pooler on port in front of server.
// Every database name maps to the same name on the server ("*"), so
// databases created after the start go through it too.
func Ini(server *pgx.ConnConfig, port int, authFile string, o Options) string {
	conn := fmt.Sprintf("host=%s port=%d user=%s", quote(server.Host), server.Port, quote(server.User))
	if server.Password != "" {
		conn += " password=" + quote(server.Password)
	}
	return fmt.Sprintf(`[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = %d
ignore_startup_parameters = extra_float_digits
server_login_retry = 1
log_connections = 0
log_disconnections = 0
`, conn, port, authFile, o.PoolSize, o.MaxClients)
}

// quote quotes a connection-string value for pgbouncer's [databases].
func quote(v string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", `\'`) + "'"
}

// writeFiles writes the ini and the userlist (the server DSN's user, any
// password: auth_type=trust) and gives the dir to the process's user.
func (b *Bouncer) writeFiles(o Options) error {
	users := fmt.Sprintf("%q \"\"\n", b.server.User)
	if err := b.write("userlist.txt", users); err != nil {
		return err
	}
	return b.write("pgbouncer.ini", Ini(b.server, b.Port, filepath.Join(b.dir, "userlist.txt"), o))
}

func (b *Bouncer) write(name, text string) error {
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("pgbouncer: %w", err)
	}
	return b.chown(path)
}

func (b *Bouncer) chown(path string) error {
	if b.cred == nil {
		return nil
	}
	if err := os.Chown(path, int(b.cred.Uid), int(b.cred.Gid)); err != nil {
		return fmt.Errorf("pgbouncer: give %s to postgres: %w", path, err)
	}
	return nil
}

// LogPath is where the process's output goes (appended to across
// restarts).
func (b *Bouncer) LogPath() string { return filepath.Join(b.dir, "pgbouncer.log") }

// start starts the process; the caller then waits for it (waitReady).
func (b *Bouncer) start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return errors.New("pgbouncer: stopped")
	}
	if err := b.chown(b.dir); err != nil {
		return err
	}
	logf, err := os.OpenFile(b.LogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgbouncer: %w", err)
	}
	// A daemon for the caller's whole run, ended by Stop or Restart, not
	// by a context (which would kill it mid-run).
	cmd := exec.Command(b.bin, filepath.Join(b.dir, "pgbouncer.ini")) //nolint:noctx // see above
	cmd.Stdout, cmd.Stderr = logf, logf
	// Should the caller die without stopping it, it goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("pgbouncer: start %s: %w", b.bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	b.proc = p
	return nil
}

// waitReady waits until a query through the pooler answers, the process
// exits, or within passes.
func (b *Bouncer) waitReady(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil {
		return errors.New("pgbouncer: stopped")
	}
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", url.PathEscape(b.server.User), b.Port, url.PathEscape(b.server.Database))
	var last error
	for {
		select {
		case <-p.done:
			return fmt.Errorf("pgbouncer exited at start: %s (log: %s)", p.cmd.ProcessState, b.LogTail(5))
		default:
		}
		if last = ping(ctx, dsn); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer did not answer on port %d: %w (log: %s)", b.Port, last, b.LogTail(5))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping runs one query through dsn on a connection of its own.
func ping(ctx context.Context, dsn string) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(pctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(pctx, "SELECT 1")
	return err
}

// DSN returns dsn (a URL DSN of a database on the server) pointed at the
// pooler: its host and port replaced, the rest (database, user,
// parameters) kept.
func (b *Bouncer) DSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "", errors.New("pgbouncer: a URL DSN is needed (postgres://...)")
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.Port))
	return u.String(), nil
}

// Restart kills the process (SIGKILL: every client connection drops, the
// server ends the sessions it held, rolling back their transactions),
// waits down for d, starts it again on the same port and waits until it
// answers.
func (b *Bouncer) Restart(ctx context.Context, down time.Duration) error {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil {
		return errors.New("pgbouncer: restart after stop")
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	t := time.NewTimer(down)
	select {
	case <-ctx.Done():
		t.Stop()
	case <-t.C:
	}
	if err := b.start(); err != nil {
		return err
	}
	return b.waitReady(ctx, 15*time.Second)
}

// Stop stops the process (SIGTERM, pgbouncer's immediate shutdown; SIGKILL
// after 5 s), waits for it and removes its dir. Safe to call twice.
func (b *Bouncer) Stop() {
	b.mu.Lock()
	p := b.proc
	b.proc, b.stopped = nil, true
	b.mu.Unlock()
	if p != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// LogTail returns the last n lines of the log, joined by " | ".
func (b *Bouncer) LogTail(n int) string {
	data, err := os.ReadFile(b.LogPath())
	if err != nil {
		return "none"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
