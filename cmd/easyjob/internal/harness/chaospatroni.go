package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// Patroni settings of the private cluster (--patroni): short enough that a
// lost leader is replaced within seconds, as a test wants, not a
// production setting.
const (
	patroniScope        = "easyjob-chaos"
	patroniTTL          = 10 * time.Second
	patroniLoopWait     = 1 * time.Second
	patroniRetryTimeout = 5 * time.Second
	patroniMembers      = 3
	etcdMembers         = 3
	// patroniOutage bounds how long a Patroni fault keeps the database
	// from accepting writes: the leader key's TTL plus a promotion.
	patroniOutage = patroniTTL + 5*time.Second
)

// patroniCluster is a private PostgreSQL cluster for one chaos run: a
// three-member etcd cluster (v3 API, Patroni's etcd3 DCS, quorum 2) and
// three Patroni members on
// loopback, each running its own PostgreSQL, in synchronous mode. The
// nodes reach whichever member leads through a multi-host DSN with
// target_session_attrs=read-write.
type patroniCluster struct {
	dir        string              // temp dir owned by postgres: etcd/, one dir per member
	binDir     string              // PostgreSQL's bin directory (postgres, pg_ctl, initdb, pg_basebackup, pg_rewind)
	cred       *syscall.Credential // the postgres OS user when run as root
	etcds      []*etcdMember
	members    []*patroniMember
	dsn        string     // multi-host DSN of the postgres database, read-write member only
	haproxy    *groupProc // --patroni-via haproxy; nil otherwise
	haproxyDSN string     // the postgres database through haproxy

	mu sync.Mutex // guards the members' and etcds' proc (a patroni-kill or etcd-loss restarts one) and haproxy
}

// etcdMember is one member of the DCS's etcd cluster.
type etcdMember struct {
	name       string
	clientPort int
	peerPort   int
	dir        string // etcd.log, data/ (kept across a restart: the member rejoins)
	proc       *groupProc
}

func (e *etcdMember) clientURL() string { return fmt.Sprintf("http://127.0.0.1:%d", e.clientPort) }
func (e *etcdMember) peerURL() string   { return fmt.Sprintf("http://127.0.0.1:%d", e.peerPort) }
func (e *etcdMember) log() string       { return filepath.Join(e.dir, "etcd.log") }

// patroniMember is one Patroni process and the PostgreSQL it runs.
type patroniMember struct {
	name     string
	restPort int
	pgPort   int
	dir      string // the member's dir: patroni.yml, patroni.log, data/
	proc     *groupProc
}

func (m *patroniMember) yml() string  { return filepath.Join(m.dir, "patroni.yml") }
func (m *patroniMember) data() string { return filepath.Join(m.dir, "data") }
func (m *patroniMember) log() string  { return filepath.Join(m.dir, "patroni.log") }

// groupProc is a process started in its own process group, so that a
// signal to the group reaches whatever it started (Patroni's helpers).
type groupProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process was waited for
}

// startGroupProc starts argv with its output appended to logPath, in a
// new process group, as cred (nil: as this process's user).
func startGroupProc(argv []string, logPath string, cred *syscall.Credential, env []string) (*groupProc, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if cred != nil {
		_ = logf.Chown(int(cred.Uid), int(cred.Gid))
	}
	// A daemon for the whole run: stopped in order by the cluster's stop,
	// not by a context (which would SIGKILL it mid-run).
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:noctx // see above
	cmd.Stdout, cmd.Stderr, cmd.Env = logf, logf, env
	// Its own group: a Ctrl-C at the terminal reaches the harness only,
	// which then stops the cluster in order. Should the harness die
	// without stopping it (SIGKILL, SIGPIPE), SIGTERM makes Patroni stop
	// its PostgreSQL and etcd exit; the temp dir stays.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(argv[0]), err)
	}
	p := &groupProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// signalGroup sends sig to p's process group.
func (p *groupProc) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// stop sends SIGTERM to the group, then SIGKILL after grace, and waits.
func (p *groupProc) stop(grace time.Duration) {
	if p == nil {
		return
	}
	p.signalGroup(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.signalGroup(syscall.SIGKILL)
		<-p.done
	}
	// Helpers left in the group (the leader may have exited first).
	p.signalGroup(syscall.SIGKILL)
}

// patroniBinDir is PostgreSQL's bin directory for Patroni's
// postgresql.bin_dir: the real directory of `postgres` (/usr/local/bin
// may hold symlinks to a few programs only), which must also hold
// pg_basebackup and pg_rewind.
func patroniBinDir() (string, error) {
	pg, err := findPGBin("postgres")
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(pg); err == nil {
		pg = resolved
	}
	dir := filepath.Dir(pg)
	for _, prog := range []string{"pg_ctl", "initdb", "pg_basebackup", "pg_rewind"} {
		if _, err := os.Stat(filepath.Join(dir, prog)); err != nil {
			return "", fmt.Errorf("%s has postgres but no %s: Patroni needs both in one directory", dir, prog)
		}
	}
	return dir, nil
}

// checkPatroniTools reports which programs --patroni needs are missing;
// via is how the nodes reach the leader (--patroni-via).
func checkPatroniTools(via string) error {
	var missing []string
	for _, prog := range []string{"patroni", "patronictl", "etcd"} {
		if _, err := exec.LookPath(prog); err != nil {
			missing = append(missing, prog)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s not found: install Debian's patroni and etcd-server packages (apt-get install -y patroni etcd-server)", strings.Join(missing, ", "))
	}
	switch via {
	case "multihost":
	case "haproxy":
		if _, err := findSbin("haproxy"); err != nil {
			return fmt.Errorf("--patroni-via haproxy: %w: install Debian's haproxy package (apt-get install -y haproxy)", err)
		}
	default:
		return fmt.Errorf("--patroni-via %q: want multihost or haproxy", via)
	}
	_, err := patroniBinDir()
	return err
}

// patroniConfig is what one member's patroni.yml says.
type patroniConfig struct {
	Name     string
	RestPort int
	PGPort   int
	EtcdHost string // etcd3 hosts: every etcd member's client host:port, comma-separated
	Dir      string // the member's dir
	BinDir   string
	Async    bool // synchronous_mode: false (--patroni-async)
}

// patroniYAML renders a member's configuration. Auth is trust on
// 127.0.0.1 for everyone, replication included, so no password is
// needed; the superuser also does pg_rewind. fsync is off: the faults
// kill processes, never the kernel, so the page cache survives them and
// the shared cores are spared the flushes.
func patroniYAML(c patroniConfig) string {
	return fmt.Sprintf(`scope: %[1]s
name: %[2]s
log:
  level: INFO
restapi:
  listen: 127.0.0.1:%[3]d
  connect_address: 127.0.0.1:%[3]d
etcd3:
  hosts: %[4]s
bootstrap:
  dcs:
    ttl: %[5]d
    loop_wait: %[6]d
    retry_timeout: %[7]d
    maximum_lag_on_failover: 1048576
    synchronous_mode: %[11]t
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        fsync: "off"
        max_connections: 200
  initdb:
    - encoding: UTF8
    - locale: C
    - auth: trust
postgresql:
  listen: 127.0.0.1:%[8]d
  connect_address: 127.0.0.1:%[8]d
  data_dir: %[9]s/data
  bin_dir: %[10]s
  pgpass: %[9]s/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: %[9]s
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
`, patroniScope, c.Name, c.RestPort, c.EtcdHost,
		int(patroniTTL.Seconds()), int(patroniLoopWait.Seconds()), int(patroniRetryTimeout.Seconds()),
		c.PGPort, c.Dir, c.BinDir, !c.Async)
}

// multiHostDSN is the DSN of database db on every port of 127.0.0.1,
// connecting to the one that accepts writes.
func multiHostDSN(ports []int, db string) string {
	hosts := make([]string, len(ports))
	for i, p := range ports {
		hosts[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&target_session_attrs=read-write", strings.Join(hosts, ","), db)
}

// patroniMemberState is one member as Patroni's REST API /cluster lists it.
type patroniMemberState struct {
	Name     string          `json:"name"`
	Role     string          `json:"role"` // leader | sync_standby | replica (| standby_leader)
	State    string          `json:"state"`
	Host     string          `json:"host"`
	Port     int             `json:"port"`
	Timeline int             `json:"timeline"`
	Lag      json.RawMessage `json:"lag"` // bytes, or "unknown"
}

// patroniClusterState is the REST API's /cluster.
type patroniClusterState struct {
	Members []patroniMemberState `json:"members"`
}

// parsePatroniCluster parses the REST API's /cluster answer.
func parsePatroniCluster(b []byte) (patroniClusterState, error) {
	var st patroniClusterState
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("parse patroni /cluster: %w", err)
	}
	return st, nil
}

// leader returns the running leader, if any.
func (st patroniClusterState) leader() (patroniMemberState, bool) {
	for _, m := range st.Members {
		if m.Role == "leader" && m.State == "running" {
			return m, true
		}
	}
	return patroniMemberState{}, false
}

// syncStandby returns the running synchronous standby, else a running
// replica: the member a switchover goes to (in synchronous mode Patroni
// only promotes the synchronous standby).
func (st patroniClusterState) syncStandby() (patroniMemberState, bool) {
	var alt *patroniMemberState
	for i, m := range st.Members {
		if m.State != "running" || m.Role == "leader" {
			continue
		}
		if m.Role == "sync_standby" {
			return m, true
		}
		if alt == nil {
			alt = &st.Members[i]
		}
	}
	if alt != nil {
		return *alt, true
	}
	return patroniMemberState{}, false
}

// healthy reports whether the cluster has a running leader and n-1
// running replicas on its timeline with a known lag, and if not, why.
func (st patroniClusterState) healthy(n int) (bool, string) {
	l, ok := st.leader()
	if !ok {
		return false, "no running leader"
	}
	reps := 0
	for _, m := range st.Members {
		if m.Name == l.Name {
			continue
		}
		if m.State == "running" && m.Timeline == l.Timeline && len(m.Lag) > 0 && m.Lag[0] != '"' {
			reps++
		}
	}
	if reps < n-1 {
		return false, fmt.Sprintf("%d of %d replicas running on timeline %d", reps, n-1, l.Timeline)
	}
	return true, ""
}

// startPatroniCluster starts three etcd members and three Patroni members in a new temp
// dir and waits (ctx bounds it) until one leads with two streaming
// replicas; async turns Patroni's synchronous mode off. The caller must
// call stop; on an error it has stopped what it started.
func startPatroniCluster(ctx context.Context, async bool) (_ *patroniCluster, err error) {
	binDir, err := patroniBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "easyjob-patroni-")
	if err != nil {
		return nil, err
	}
	c := &patroniCluster{dir: dir, binDir: binDir}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	if os.Geteuid() == 0 {
		// PostgreSQL refuses root: Patroni, and the servers it starts, run
		// as the postgres OS user, which owns the dir.
		uid, gid, err := postgresOSUser()
		if err != nil {
			return nil, err
		}
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	ports, err := freePorts(ctx, 2*etcdMembers+2*patroniMembers)
	if err != nil {
		return nil, err
	}
	if err := c.mkdir(dir); err != nil {
		return nil, err
	}
	var hosts []string
	for i := range etcdMembers {
		e := &etcdMember{name: fmt.Sprintf("etcd%d", i+1), clientPort: ports[2*i], peerPort: ports[2*i+1],
			dir: filepath.Join(dir, fmt.Sprintf("etcd%d", i+1))}
		if err := c.mkdir(e.dir); err != nil {
			return nil, err
		}
		c.etcds = append(c.etcds, e)
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", e.clientPort))
	}
	for _, e := range c.etcds {
		if err := c.startEtcd(e, c.etcdInitial()); err != nil {
			return nil, err
		}
	}
	ports = ports[2*etcdMembers:]
	var pgPorts []int
	for i := range patroniMembers {
		m := &patroniMember{
			name: fmt.Sprintf("pg%d", i+1), restPort: ports[2*i], pgPort: ports[2*i+1],
			dir: filepath.Join(dir, fmt.Sprintf("pg%d", i+1)),
		}
		if err := c.mkdir(m.dir); err != nil {
			return nil, err
		}
		y := patroniYAML(patroniConfig{Name: m.name, RestPort: m.restPort, PGPort: m.pgPort, EtcdHost: strings.Join(hosts, ","), Dir: m.dir, BinDir: binDir, Async: async})
		if err := c.writeFile(m.yml(), y); err != nil {
			return nil, err
		}
		c.members = append(c.members, m)
		pgPorts = append(pgPorts, m.pgPort)
	}
	if err := c.waitEtcd(ctx); err != nil {
		return nil, err
	}
	// The first member alone bootstraps (initdb); the others clone it
	// with pg_basebackup once it leads.
	for _, m := range c.members {
		if err := c.startMember(m); err != nil {
			return nil, err
		}
	}
	c.dsn = multiHostDSN(pgPorts, "postgres")
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := c.waitHealthy(wctx); err != nil {
		return nil, fmt.Errorf("wait for a leader and %d streaming replicas: %w (logs: %s)", patroniMembers-1, err, c.logTails())
	}
	if err := execOn(ctx, c.dsn, `CREATE TABLE IF NOT EXISTS easyjob_chaos_probe (at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("create the write probe table: %w", err)
	}
	return c, nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(ctx context.Context, n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for len(out) < n {
		p, err := freePort(ctx)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// mustLookPath is exec.LookPath for a program check has found already.
func mustLookPath(prog string) string {
	if p, err := exec.LookPath(prog); err == nil {
		return p
	}
	return prog
}

// env is the environment of the cluster's processes: HOME in the run's
// dir, since the postgres user's home may not be writable.
func (c *patroniCluster) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.dir, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PYTHONUNBUFFERED=1"}
}

// mkdir creates dir (0700, as PostgreSQL wants its parent of data/ to be
// private enough) owned by the cluster's OS user.
func (c *patroniCluster) mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return c.chown(dir)
}

func (c *patroniCluster) chown(path string) error {
	if c.cred == nil {
		return nil
	}
	if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
		return fmt.Errorf("give %s to postgres: %w", path, err)
	}
	return nil
}

func (c *patroniCluster) writeFile(path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err
	}
	return c.chown(path)
}

// startEtcd starts etcd member e of the cluster initial (name=peer URL,
// comma-separated). On a restart, e's data dir holds the member: etcd
// ignores the --initial-cluster flags and rejoins.
func (c *patroniCluster) startEtcd(e *etcdMember, initial string) error {
	p, err := startGroupProc([]string{mustLookPath("etcd"),
		"--name", e.name, "--data-dir", filepath.Join(e.dir, "data"),
		"--listen-client-urls", e.clientURL(), "--advertise-client-urls", e.clientURL(),
		"--listen-peer-urls", e.peerURL(), "--initial-advertise-peer-urls", e.peerURL(),
		"--initial-cluster", initial, "--initial-cluster-token", patroniScope, "--initial-cluster-state", "new",
		"--log-level", "warn",
	}, e.log(), c.cred, c.env())
	if err != nil {
		return err
	}
	c.mu.Lock()
	e.proc = p
	c.mu.Unlock()
	return nil
}

// etcdInitial is the --initial-cluster of the etcd members.
func (c *patroniCluster) etcdInitial() string {
	var initial []string
	for _, e := range c.etcds {
		initial = append(initial, e.name+"="+e.peerURL())
	}
	return strings.Join(initial, ",")
}

// waitEtcd waits until every etcd member reports itself healthy (a
// member of a cluster with a leader).
func (c *patroniCluster) waitEtcd(ctx context.Context) error {
	for _, e := range c.etcds {
		if err := c.waitEtcdMember(ctx, e, 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// waitEtcdMember waits (at most d) until e answers /health with health
// true.
func (c *patroniCluster) waitEtcdMember(ctx context.Context, e *etcdMember, d time.Duration) error {
	url := e.clientURL() + "/health"
	deadline := time.Now().Add(d)
	for {
		b, err := httpGet(ctx, url)
		if err == nil && !strings.Contains(string(b), `"true"`) {
			err = fmt.Errorf("%s: %s", url, strings.TrimSpace(string(b)))
		}
		if err == nil {
			return nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("etcd member %s not healthy on %s: %w (log: %s)", e.name, url, err, fileTail(e.log(), 5))
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// etcdStatus is the part of etcd's v3 maintenance status (JSON gateway)
// that tells the leader: member IDs are uint64s, as strings.
type etcdStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

// etcdLeader returns the etcd member that leads the raft cluster, asking
// each member's status in turn; ok is false when none could tell.
func (c *patroniCluster) etcdLeader(ctx context.Context) (*etcdMember, bool) {
	for _, e := range c.etcds {
		b, err := httpPost(ctx, e.clientURL()+"/v3/maintenance/status", "{}")
		if err != nil {
			continue
		}
		var st etcdStatus
		if json.Unmarshal(b, &st) != nil || st.Leader == "" {
			continue
		}
		if st.Header.MemberID == st.Leader {
			return e, true
		}
		// Another member leads: find which by asking it.
		for _, o := range c.etcds {
			ob, err := httpPost(ctx, o.clientURL()+"/v3/maintenance/status", "{}")
			var ost etcdStatus
			if err == nil && json.Unmarshal(ob, &ost) == nil && ost.Header.MemberID == st.Leader {
				return o, true
			}
		}
	}
	return nil, false
}

// startMember starts m's Patroni.
func (c *patroniCluster) startMember(m *patroniMember) error {
	p, err := startGroupProc([]string{mustLookPath("patroni"), m.yml()}, m.log(), c.cred, c.env())
	if err != nil {
		return err
	}
	c.mu.Lock()
	m.proc = p
	c.mu.Unlock()
	return nil
}

// state asks the members' REST APIs in turn for /cluster; the first
// answer counts (every member reads the same DCS).
func (c *patroniCluster) state(ctx context.Context) (patroniClusterState, error) {
	var errs []error
	for _, m := range c.members {
		b, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/cluster", m.restPort))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return parsePatroniCluster(b)
	}
	return patroniClusterState{}, errors.Join(errs...)
}

// member returns the member named name.
func (c *patroniCluster) member(name string) *patroniMember {
	for _, m := range c.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// waitHealthy waits until the cluster has a leader and two replicas that
// Patroni lists as running and the leader's pg_stat_replication shows
// streaming, or ctx ends.
func (c *patroniCluster) waitHealthy(ctx context.Context) error {
	var why string
	for {
		st, err := c.state(ctx)
		if err != nil {
			why = err.Error()
		} else if ok, w := st.healthy(patroniMembers); !ok {
			why = w
		} else {
			l, _ := st.leader()
			n, err := streamingReplicas(ctx, l.Port)
			switch {
			case err != nil:
				why = err.Error()
			case n < patroniMembers-1:
				why = fmt.Sprintf("%d replicas streaming from %s", n, l.Name)
			default:
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", ctx.Err(), why)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// streamingReplicas counts the replicas streaming from the server on port.
func streamingReplicas(ctx context.Context, port int) (int, error) {
	var n int
	err := queryInt(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`, &n)
	return n, err
}

// execOn runs one statement on a short-lived connection to dsn.
func execOn(ctx context.Context, dsn, stmt string) error {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(qctx, stmt)
	return err
}

// postmasterPID reads the pid of m's postmaster from postmaster.pid; 0 if
// there is none.
func (m *patroniMember) postmasterPID() int {
	b, err := os.ReadFile(filepath.Join(m.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// stop stops every member (Patroni shuts its PostgreSQL down), then
// whatever survived, then etcd, and removes the dir. It ignores any
// context on purpose: clean-up must happen after a SIGINT too.
func (c *patroniCluster) stop() {
	var wg sync.WaitGroup
	c.mu.Lock()
	members := append([]*patroniMember(nil), c.members...)
	hap := c.haproxy
	c.mu.Unlock()
	hap.stop(5 * time.Second)
	for _, m := range members {
		c.mu.Lock()
		p := m.proc
		c.mu.Unlock()
		wg.Go(func() { p.stop(30 * time.Second) })
	}
	wg.Wait()
	// A PostgreSQL Patroni did not stop (Patroni was killed): it runs in a
	// session of its own.
	for _, m := range members {
		if pid := m.postmasterPID(); pid > 0 && syscall.Kill(pid, 0) == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			if err := c.pgCtl(ctx, "-D", m.data(), "-m", "immediate", "-w", "-t", "15", "stop"); err != nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			cancel()
		}
	}
	for _, e := range c.etcds {
		c.mu.Lock()
		p := e.proc
		c.mu.Unlock()
		wg.Go(func() { p.stop(10 * time.Second) })
	}
	wg.Wait()
	if err := os.RemoveAll(c.dir); err != nil {
		fmt.Fprintf(os.Stderr, "easyjob chaos: %v\n", err)
	}
}

// pgCtl runs pg_ctl as the cluster's OS user.
func (c *patroniCluster) pgCtl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "pg_ctl"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Env = c.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// logTails returns the last lines of every member's log, for an error.
func (c *patroniCluster) logTails() string {
	var parts []string
	for _, m := range c.members {
		parts = append(parts, m.name+": "+fileTail(m.log(), 4))
	}
	return strings.Join(parts, " || ")
}

// fileTail returns the last n lines of the file at path, joined by " | ".
func fileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "none"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// httpPost POSTs body (JSON) to url with a 2 s timeout and returns the
// body of a 2xx answer.
func httpPost(ctx context.Context, url, body string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return httpDo(req)
}

// httpGet GETs url with a 2 s timeout and returns the body of a 2xx
// answer.
func httpGet(ctx context.Context, url string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return httpDo(req)
}

// httpDo sends req and returns the body of a 2xx answer.
func httpDo(req *http.Request) ([]byte, error) {
	url := req.URL.String()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s", req.Method, url, resp.Status)
	}
	return b, nil
}

// createScratch creates and migrates a scratch database on the leader, as
// createScratch does, but migrates only once every member has replayed
// the CREATE DATABASE: pgx gives up a multi-host connect at the first
// host that says the database does not exist (SQLSTATE 3D000) instead of
// trying the next, so an asynchronous replica that lags the creation
// would fail the nodes' connects.
func (c *patroniCluster) createScratch(ctx context.Context) (_ *scratchDB, err error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	name := "easyjob_bench_" + hex.EncodeToString(b[:])
	if err := adminExec(ctx, c.dsn, `CREATE DATABASE "`+name+`"`); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	dsn, err := postgres.WithDatabase(c.dsn, name)
	if err != nil {
		_ = adminExec(context.Background(), c.dsn, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
		return nil, err
	}
	db := &scratchDB{admin: c.dsn, name: name, dsn: dsn}
	defer func() {
		if err != nil {
			_ = db.drop() // the error to report is err
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, m := range c.members {
		one := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", m.pgPort)
		for {
			var n int
			qerr := queryInt(wctx, one, `SELECT count(*) FROM pg_database WHERE datname = $1`, &n, name)
			if qerr == nil && n == 1 {
				break
			}
			if wctx.Err() != nil {
				return nil, fmt.Errorf("database %s not on member %s: %w (last: %s)", name, m.name, wctx.Err(), errText(qerr))
			}
			sleepCtx(wctx, 100*time.Millisecond)
		}
	}
	s, err := postgres.Open(ctx, dsn)
	if err == nil {
		err = s.Migrate(ctx)
		_ = s.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", name, err)
	}
	return db, nil
}

// queryInt runs a query returning one integer on a short-lived
// connection to dsn.
func queryInt(ctx context.Context, dsn, query string, n *int, args ...any) error {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(qctx, query, args...).Scan(n)
}

// saveLogs copies etcd's and every member's log (Patroni's, with its
// PostgreSQL's output) into dir, which the run keeps.
func (c *patroniCluster) saveLogs(dir string) {
	logs := map[string]string{}
	for _, e := range c.etcds {
		logs["patroni-"+e.name+".log"] = e.log()
	}
	if c.haproxy != nil {
		logs["haproxy.log"] = c.haproxyLog()
	}
	for _, m := range c.members {
		logs["patroni-"+m.name+".log"] = m.log()
	}
	for name, src := range logs {
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "easyjob chaos: keep %s: %v\n", name, err)
		}
	}
}

// errText is err's message, or "none".
func errText(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}
