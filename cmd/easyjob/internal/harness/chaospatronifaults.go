package harness

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// patroniKinds are the faults --patroni adds to the rotation.
var patroniKinds = []string{"switchover", "primary-kill", "patroni-kill", "etcd-loss"}

// etcdDown is how long an etcd-loss keeps its etcd member down before
// starting it again on its data dir.
const etcdDown = 10 * time.Second

// isPatroniFault reports whether kind is one of patroniKinds.
func isPatroniFault(kind string) bool {
	for _, k := range patroniKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// serverID tells one PostgreSQL postmaster from another: a member's
// server restarted in place keeps its port but not its start time.
type serverID struct {
	port    int
	started time.Time
}

// probeWrite commits one tiny INSERT through dsn (the read-write member)
// on a new connection and returns which server took it. In synchronous
// mode the commit returns once the synchronous standby has it: a write
// accepted, not merely a primary reached.
func probeWrite(ctx context.Context, dsn string) (serverID, error) {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		return serverID{}, err
	}
	defer conn.Close(context.Background())
	var id serverID
	var inRecovery bool
	err = conn.QueryRow(qctx, `INSERT INTO easyjob_chaos_probe DEFAULT VALUES
		RETURNING inet_server_port(), pg_postmaster_start_time(), pg_is_in_recovery()`).Scan(&id.port, &id.started, &inRecovery)
	if err != nil {
		return serverID{}, err
	}
	if inRecovery {
		return serverID{}, errors.New("the server that took the write is in recovery")
	}
	return id, nil
}

// waitWrites polls probeWrite every 100 ms until a server other than
// before (another member, or the same one restarted) commits a write; it
// returns when the answer came.
func waitWrites(ctx context.Context, dsn string, before serverID) (time.Time, serverID, error) {
	var last error
	for {
		id, err := probeWrite(ctx, dsn)
		if err == nil && (id.port != before.port || !id.started.Equal(before.started)) {
			return time.Now(), id, nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last == nil {
				last = errors.New("only the old leader took writes")
			}
			return time.Time{}, serverID{}, fmt.Errorf("%w (last probe: %s)", ctx.Err(), last.Error())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// patroniFault runs a Patroni fault on its own goroutine: it finds the
// leader, strikes, records when the fault was issued (f.At) and when a
// new server accepted writes (f.Until), restarts a killed Patroni, and
// waits (bounded) until the cluster is back to a leader and two
// streaming replicas. Patroni faults run one at a time.
func (r *chaosRun) patroniFault(f *fault) {
	r.patMu.Lock()
	defer r.patMu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, 3*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) {
		r.mu.Lock()
		f.PGCommandError = fmt.Sprintf(format, args...)
		r.mu.Unlock()
	}
	st, err := r.pat.state(ctx)
	if err != nil {
		fail("patroni /cluster: %v", err)
		return
	}
	l, ok := st.leader()
	leader := r.pat.member(l.Name)
	if !ok || leader == nil {
		fail("no leader to strike")
		return
	}
	before, err := probeWrite(ctx, r.pat.dsn)
	if err != nil {
		fail("the cluster took no write before the fault: %v", err)
		return
	}
	r.mu.Lock()
	f.Leader = leader.name
	r.mu.Unlock()

	var ctlDone chan error
	if f.Kind == "etcd-loss" {
		// Patroni keeps its leader (the DCS keeps its quorum, 2 of 3):
		// measured, not waited for.
		if err := r.etcdLoss(ctx, f); err != nil {
			fail("%v", err)
			return
		}
	}
	switch f.Kind {
	case "switchover":
		cand, ok := st.syncStandby()
		if !ok {
			fail("no running replica to switch over to")
			return
		}
		ctlDone = make(chan error, 1)
		r.setAt(f, time.Now())
		go func() { ctlDone <- r.pat.switchover(ctx, leader, cand.Name) }()
	case "primary-kill":
		pid := leader.postmasterPID()
		if pid == 0 {
			fail("no postmaster.pid in %s", leader.data())
			return
		}
		err := syscall.Kill(pid, syscall.SIGKILL)
		r.setAt(f, time.Now())
		if err != nil {
			fail("kill postmaster %d: %v", pid, err)
			return
		}
	case "patroni-kill":
		// The member's machine dies: Patroni and every PostgreSQL process
		// at once, so nobody releases the leader key: it expires after
		// the TTL.
		r.pat.mu.Lock()
		p := leader.proc
		r.pat.mu.Unlock()
		var stopped []int
		if r.o.patroniAsync {
			// A lagging asynchronous replica: the leader commits on
			// while its walsenders send nothing.
			var err error
			if stopped, err = r.withholdWAL(ctx, f, leader); err != nil {
				fail("withhold the WAL: %v", err)
			}
		}
		pid := leader.postmasterPID()
		p.signalGroup(syscall.SIGKILL)
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// A stopped walsender cannot see its postmaster die: it would
		// hold the shared memory and keep the member from restarting.
		for _, ws := range stopped {
			_ = syscall.Kill(ws, syscall.SIGKILL)
		}
		r.setAt(f, time.Now())
		<-p.done
	}
	var at time.Time
	var id serverID
	if f.Kind != "etcd-loss" {
		at, id, err = waitWrites(ctx, r.pat.dsn, before)
	}
	if ctlDone != nil {
		if cerr := <-ctlDone; cerr != nil {
			fail("%v", cerr)
		}
	}
	if err != nil {
		fail("no write accepted after the fault: %v", err)
	} else if f.Kind != "etcd-loss" {
		r.mu.Lock()
		f.Until = at
		f.NewLeader = r.pat.memberByPort(id.port)
		r.mu.Unlock()
	}
	if f.Kind == "patroni-kill" {
		// The member comes back as a replica (pg_rewind if it diverged).
		if err := r.pat.startMember(leader); err != nil {
			fail("restart patroni %s: %v", leader.name, err)
			return
		}
	}
	hctx, hcancel := context.WithTimeout(ctx, 90*time.Second)
	defer hcancel()
	if err := r.pat.waitHealthy(hctx); err != nil {
		fail("cluster not back to a leader and %d streaming replicas: %v", patroniMembers-1, err)
		return
	}
	r.mu.Lock()
	f.HealedMS = ms(time.Since(f.At))
	r.mu.Unlock()
}

// etcdLoss SIGKILLs one etcd member (the raft leader when a member's
// status names it, else the first), probes writes through the nodes' DSN
// every 100 ms for etcdDown, then starts the member again on its data dir
// and waits until it is healthy (it rejoins). f.Until is when the first
// write after the kill was accepted, after the last refused one if any
// was: the writes refused are Until - At; f.WriteProbes and
// f.WriteProbesFailed count the probes while the member was down.
func (r *chaosRun) etcdLoss(ctx context.Context, f *fault) error {
	e, isLeader := r.pat.etcdLeader(ctx)
	if !isLeader {
		e = r.pat.etcds[0]
	}
	r.pat.mu.Lock()
	p := e.proc
	r.pat.mu.Unlock()
	p.signalGroup(syscall.SIGKILL)
	r.setAt(f, time.Now())
	<-p.done
	r.mu.Lock()
	f.EtcdMember, f.EtcdLeader = e.name, isLeader
	r.mu.Unlock()
	var until time.Time
	var last serverID
	var probes, failed int
	var lastErr error
	for end := f.At.Add(etcdDown); time.Now().Before(end) && ctx.Err() == nil; {
		id, err := probeWrite(ctx, r.pat.dsn)
		probes++
		switch {
		case err != nil:
			failed++
			until, lastErr = time.Time{}, err
		case until.IsZero():
			until, last = time.Now(), id
		default:
			last = id
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	if until.IsZero() {
		// Refused to the end of the outage: wait for writes as after a
		// failover (any server, before's included).
		at, id, err := waitWrites(ctx, r.pat.dsn, serverID{})
		if err != nil {
			return fmt.Errorf("no write accepted after the etcd member loss (last refusal: %s): %w", errText(lastErr), err)
		}
		until, last = at, id
	}
	r.mu.Lock()
	f.Until, f.NewLeader = until, r.pat.memberByPort(last.port)
	f.WriteProbes, f.WriteProbesFailed = probes, failed
	r.mu.Unlock()
	restarted := time.Now()
	if err := r.pat.startEtcd(e, r.pat.etcdInitial()); err != nil {
		return fmt.Errorf("restart etcd %s: %w", e.name, err)
	}
	if err := r.pat.waitEtcdMember(ctx, e, time.Minute); err != nil {
		return err
	}
	r.mu.Lock()
	f.EtcdRejoinMS = ms(time.Since(restarted))
	r.mu.Unlock()
	return nil
}

// withholdWAL stops (SIGSTOP) the walsenders of leader's PostgreSQL for
// --async-lag, so that the transactions it commits meanwhile (it does
// not wait for a standby in asynchronous mode) reach no replica; it
// returns their pids, still stopped (the kill that follows must end
// them), and records the WAL the replicas missed.
func (r *chaosRun) withholdWAL(ctx context.Context, f *fault, leader *patroniMember) (stopped []int, err error) {
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", leader.pgPort)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(qctx, `SELECT pid FROM pg_stat_replication`)
	if err != nil {
		return nil, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	if len(pids) == 0 {
		return nil, errors.New("no walsender on the leader")
	}
	for _, pid := range pids {
		if err := syscall.Kill(int(pid), syscall.SIGSTOP); err != nil {
			return stopped, fmt.Errorf("SIGSTOP walsender %d: %w", pid, err)
		}
		stopped = append(stopped, int(pid))
	}
	var before int64
	if err := conn.QueryRow(qctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&before); err != nil {
		return stopped, err
	}
	sleepCtx(ctx, r.o.asyncLag)
	var after int64
	if err := conn.QueryRow(qctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&after); err != nil {
		return stopped, err
	}
	r.mu.Lock()
	f.WithheldMS, f.WithheldBytes = ms(r.o.asyncLag), after-before
	r.mu.Unlock()
	return stopped, nil
}

// setAt records that f was issued, and when.
func (r *chaosRun) setAt(f *fault, at time.Time) {
	r.mu.Lock()
	f.At, f.struck = at, true
	r.mu.Unlock()
}

// switchover asks Patroni, through patronictl, to hand the leader role
// from leader to candidate now. patronictl exits 0 on a refused
// switchover too: its output tells.
func (c *patroniCluster) switchover(ctx context.Context, leader *patroniMember, candidate string) error {
	out, err := exec.CommandContext(ctx, mustLookPath("patronictl"), "-c", leader.yml(),
		"switchover", "--leader", leader.name, "--candidate", candidate, "--force").CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		return fmt.Errorf("patronictl switchover: %w: %s", err, lastLine(text))
	}
	if !strings.Contains(text, "Successfully") {
		return fmt.Errorf("patronictl switchover: %s", lastLine(text))
	}
	return nil
}

// lastLine returns the last line of s.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// memberByPort names the member whose PostgreSQL listens on port.
func (c *patroniCluster) memberByPort(port int) string {
	for _, m := range c.members {
		if m.pgPort == port {
			return m.name
		}
	}
	return fmt.Sprintf("port %d", port)
}

// analyzePatroniFaults measures, per Patroni fault, from the moment a
// server accepted writes again (f.Until): each task's first fire after it
// (Resume), and the tasks that did not fire within lostAfter of it
// (LostTasks, counted in res.FailoverLost), unless the steady window
// ended first. A silence that meets the fault's window is not counted as
// lost by findLost (see pgWindows), so this is where a task the failover
// left behind shows up.
func (res *chaosResult) analyzePatroniFaults(tasks []string, byTask map[string][]fire, to time.Time, lostAfter time.Duration) {
	for _, f := range res.Faults {
		if !isPatroniFault(f.Kind) || f.Until.IsZero() {
			continue
		}
		back := f.Until.UnixNano()
		f.Unjudged = f.Until.Add(lostAfter).After(to)
		var ds []time.Duration
		for _, task := range tasks {
			fs := byTask[task]
			i := sort.Search(len(fs), func(i int) bool { return fs[i].Start >= back })
			if i < len(fs) {
				ds = append(ds, time.Duration(fs[i].Start-back))
			}
			if (i == len(fs) || fs[i].Start-back > int64(lostAfter)) && !f.Unjudged {
				f.LostTasks++
			}
		}
		f.Resume, f.resumeDs = summarize(ds), ds
		res.FailoverLost += f.LostTasks
	}
}

// patroniWindow is the span of f in which duplicates and silences are
// charged to it: from a second before it was issued until lostAfter after
// writes came back (the end of the run if they did not).
func patroniWindow(f *fault, tEnd time.Time, lostAfter time.Duration) [2]time.Time {
	until := f.Until
	if until.IsZero() {
		until = tEnd
	}
	return [2]time.Time{f.At.Add(-time.Second), until.Add(lostAfter)}
}

// chargeDuplicate adds a duplicate's extra runs [a, b] (unix nanos) to
// every Patroni fault whose window it meets, as doubled (a violation) or
// as allowed re-runs.
func (res *chaosResult) chargeDuplicate(a, b int64, extra int, violation bool) {
	for _, f := range res.Faults {
		if !isPatroniFault(f.Kind) || f.win[0].IsZero() {
			continue
		}
		w := f.win
		if a <= w[1].UnixNano() && b >= w[0].UnixNano() {
			if violation {
				f.Doubled += extra
			} else {
				f.Reruns += extra
			}
		}
	}
}

// patroniSummary is one line per Patroni fault kind: how many ran, how
// long writes were refused, how fast fires resumed, lost and doubled.
func (res *chaosResult) patroniSummary(kind string) (string, bool) {
	var n, failed, lost, doubled, reruns int
	var outages, resumeP50, resumeMax, healed []time.Duration
	for _, f := range res.Faults {
		if f.Kind != kind {
			continue
		}
		n++
		if f.Until.IsZero() {
			failed++
			continue
		}
		if f.Kind == "etcd-loss" && f.WriteProbesFailed == 0 {
			outages = append(outages, 0) // Until is merely the first write probe's answer
		} else {
			outages = append(outages, f.Until.Sub(f.At))
		}
		if f.Resume.N > 0 {
			resumeP50 = append(resumeP50, msDur(f.Resume.P50))
			resumeMax = append(resumeMax, msDur(f.Resume.Max))
		}
		if f.HealedMS > 0 {
			healed = append(healed, msDur(f.HealedMS))
		}
		lost += f.LostTasks
		doubled += f.Doubled
		reruns += f.Reruns
	}
	if n == 0 {
		return "", false
	}
	maxOf := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "-"
		}
		if maxDur(ds) == 0 {
			return "none"
		}
		return fmtMS(ms(maxDur(ds)))
	}
	s := fmt.Sprintf("%d done", n)
	if failed > 0 {
		s += fmt.Sprintf(" (%d without writes back)", failed)
	}
	s += fmt.Sprintf("; writes refused %s (max); fires resumed %s (worst p50) / %s (max) after writes; %d lost, %d doubled (+%d allowed re-runs); healed to %d members %s (max)",
		maxOf(outages), maxOf(resumeP50), maxOf(resumeMax), lost, doubled, reruns, patroniMembers, maxOf(healed))
	return s, true
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
