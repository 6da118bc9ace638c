package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// fakeClockServer is a private PostgreSQL server whose wall clock the
// harness steps (--clock-step). It runs under libfaketime, which adds the
// offset read from a file to every wall-clock reading of the server's
// processes; with FAKETIME_NO_CACHE the file is read on every reading, so
// a rewrite steps every backend at once, open connections included.
type fakeClockServer struct {
	dir        string   // temp dir owned by the server's OS user: data/, the offset file, the log
	data       string   // data directory
	offsetFile string   // libfaketime's FAKETIME_TIMESTAMP_FILE
	pgCtl      string   // absolute path of pg_ctl
	asUser     []string // command prefix that runs as the server's OS user (root: runuser)
	dsn        string   // maintenance database, trust auth
	env        []string // libfaketime's environment, for pg_ctl start
	offset     time.Duration
}

// libfaketimeCandidates are where Debian's libfaketime package (pulled in
// by the faketime package) and a source build put the library.
var libfaketimeCandidates = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/*/faketime/libfaketime.so.1",
	"/usr/lib/faketime/libfaketime.so.1",
	"/usr/local/lib/faketime/libfaketime.so.1",
}

// findLibfaketime returns the path of libfaketime.so.1.
func findLibfaketime() (string, error) {
	for _, pat := range libfaketimeCandidates {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[0], nil
		}
	}
	return "", errors.New("libfaketime.so.1 not found: install Debian's faketime package (apt-get install -y faketime)")
}

// findPGBin returns the absolute path of PostgreSQL's program name: on
// PATH, else the newest /usr/lib/postgresql/VERSION/bin.
func findPGBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(m) == 0 {
		return "", fmt.Errorf("%s not found on PATH or under /usr/lib/postgresql: install PostgreSQL's server package", name)
	}
	version := func(p string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return v
	}
	sort.Slice(m, func(i, j int) bool { return version(m[i]) < version(m[j]) })
	return m[len(m)-1], nil
}

// formatFakeOffset renders d as a libfaketime relative offset: a sign and
// seconds, with a decimal point for fractions ("+0", "+5", "-5",
// "+0.25"). libfaketime reads a bare number after the sign as seconds.
func formatFakeOffset(d time.Duration) string {
	d = d.Round(time.Microsecond)
	s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if d >= 0 {
		s = "+" + s
	}
	return s
}

// startFakeClockServer initdbs a fresh cluster in a temp dir and starts it
// under libfaketime on a free loopback port, with trust auth and the
// clock offset at zero. As root it runs initdb and pg_ctl as the postgres
// OS user (both refuse root). The caller must call stop.
func startFakeClockServer(ctx context.Context, lib string) (_ *fakeClockServer, err error) {
	initdb, err := findPGBin("initdb")
	if err != nil {
		return nil, err
	}
	pgCtl, err := findPGBin("pg_ctl")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "easyjob-clockstep-")
	if err != nil {
		return nil, err
	}
	s := &fakeClockServer{dir: dir, data: filepath.Join(dir, "data"), offsetFile: filepath.Join(dir, "clock-offset"), pgCtl: pgCtl}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if os.Geteuid() == 0 {
		uid, gid, err := postgresOSUser()
		if err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("give %s to postgres: %w", dir, err)
		}
		s.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	if err := s.writeOffset(0); err != nil {
		return nil, err
	}
	if err := s.run(ctx, nil, initdb, "-D", s.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, err
	}
	port, err := freePort(ctx)
	if err != nil {
		return nil, err
	}
	// Settings go into postgresql.conf rather than pg_ctl -o, whose string
	// a shell splits. No Unix socket: the harness connects over TCP.
	conf := fmt.Sprintf("\n# easyjob chaos --clock-step\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n", port)
	if err := appendFile(filepath.Join(s.data, "postgresql.conf"), conf); err != nil {
		return nil, err
	}
	env := []string{
		"LD_PRELOAD=" + lib,
		"FAKETIME_TIMESTAMP_FILE=" + s.offsetFile,
		"FAKETIME_NO_CACHE=1", // a rewrite of the file steps the clock at once, not within 10 s
		// A step of the wall clock (NTP, a failover) leaves the monotonic
		// clock alone; PostgreSQL's timeouts run on it.
		"FAKETIME_DONT_FAKE_MONOTONIC=1",
		"NO_FAKE_STAT=1", // file times stay the kernel's
	}
	s.env = env
	if err := s.run(ctx, env, pgCtl, "-D", s.data, "-l", filepath.Join(dir, "postgres.log"), "-w", "-t", "60", "start"); err != nil {
		return nil, fmt.Errorf("%w (log: %s)", err, s.logTail())
	}
	s.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return s, nil
}

// run runs a PostgreSQL program as the server's OS user, with env added
// to the environment (through env(1): runuser may not pass LD_PRELOAD on).
func (s *fakeClockServer) run(ctx context.Context, env []string, prog string, args ...string) error {
	argv := append(append([]string(nil), s.asUser...), "env")
	argv = append(append(append(argv, env...), prog), args...)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(prog), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// setOffset makes the server's wall clock run d ahead of the real one
// (behind for d < 0) from now on.
func (s *fakeClockServer) setOffset(d time.Duration) error {
	if err := s.writeOffset(d); err != nil {
		return err
	}
	s.offset = d
	return nil
}

// writeOffset replaces the offset file by rename, so that no reading of
// the clock meets a half-written file.
func (s *fakeClockServer) writeOffset(d time.Duration) error {
	tmp := s.offsetFile + ".new"
	if err := os.WriteFile(tmp, []byte(formatFakeOffset(d)+"\n"), 0o644); err != nil {
		return fmt.Errorf("write clock offset: %w", err)
	}
	if err := os.Rename(tmp, s.offsetFile); err != nil {
		return fmt.Errorf("write clock offset: %w", err)
	}
	return nil
}

// stop stops the server (fast: connections drop) and removes its
// directory. It ignores the caller's context on purpose: clean-up must
// happen after a SIGINT too. Failures are printed.
func (s *fakeClockServer) stop() {
	if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
		defer cancel()
		if err := s.run(ctx, nil, s.pgCtl, "-D", s.data, "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
			fmt.Fprintf(os.Stderr, "easyjob chaos: stop the --clock-step server: %v (its files stay in %s)\n", err, s.dir)
			return
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		fmt.Fprintf(os.Stderr, "easyjob chaos: %v\n", err)
	}
}

// logTail returns the last lines of the server's log, for an error.
func (s *fakeClockServer) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return "none"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], " | ")
}

// measureOffset returns the offset of dsn's server clock to the local
// one, bounded by one round trip: [lo, hi].
func measureOffset(ctx context.Context, dsn string) (lo, hi time.Duration, err error) {
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	sent := time.Now()
	dbNow, err := st.Now(ctx)
	if err != nil {
		return 0, 0, err
	}
	received := time.Now()
	return dbNow.Sub(received), dbNow.Sub(sent), nil
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// appendFile appends text to the file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// nextClockOffset is the offset the next clock-step fault sets: +step
// from zero, back to zero from +step, so the steps alternate forward and
// back and the run ends on the real time after an even number.
func nextClockOffset(cur, step time.Duration) time.Duration {
	if cur == 0 {
		return step
	}
	return 0
}

// stepClock is the clock-step fault: it rewrites the offset and records
// the step; a goroutine then checks with a query that the server's clock
// moved.
func (r *chaosRun) stepClock() {
	next := nextClockOffset(r.clock.offset, r.o.clockStep)
	step := next - r.clock.offset
	err := r.clock.setOffset(next)
	at := time.Now()
	// An instant fault: it is over when written. The analysis gives the
	// nodes DeadAfter + a heartbeat to settle on the new clock.
	f := &fault{Kind: "clock-step", At: at, Until: at, StepMS: ms(step), step: step}
	if err != nil {
		f.PGCommandError = err.Error()
		f.StepMS, f.step = 0, 0
	}
	r.addFault(f)
	if err == nil {
		r.pgWG.Go(func() { r.checkClock(f, next) })
	}
}

// checkClock reads the server's clock after a step and records the offset
// it saw; more than 250 ms (the step the nodes notice) from want is an
// error: the fault did not happen as recorded.
func (r *chaosRun) checkClock(f *fault, want time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var lo, hi time.Duration
	var err error
	for ctx.Err() == nil { // a connection may fail while nodes reconnect: retry
		if lo, hi, err = measureOffset(ctx, r.o.admin); err == nil {
			break
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		f.PGCommandError = fmt.Sprintf("read the database clock after the step: %v", err)
		return
	}
	seen := ms(lo + (hi-lo)/2)
	f.SeenOffsetMS = &seen
	if want < lo-clockCheckSlack || want > hi+clockCheckSlack {
		f.PGCommandError = fmt.Sprintf("database clock offset %s after the step, want %s", fmtMS(seen), fmtMS(ms(want)))
	}
}

// clockCheckSlack is how far the offset a query sees may be from the one
// written: well below the 250 ms a node counts as a step of the clock.
const clockCheckSlack = 100 * time.Millisecond

// postgresOSUser returns the uid and gid of the postgres OS user: when the
// harness runs as root, PostgreSQL's programs (and Patroni) run as it,
// for they refuse root.
func postgresOSUser() (uid, gid int, err error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("PostgreSQL refuses root and there is no postgres OS user to run it as: %w", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}
