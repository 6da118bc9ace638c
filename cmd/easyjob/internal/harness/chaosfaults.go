package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

// event is a scheduled step of a chaos run: a fault to inject (kill,
// freeze, pg-restart, pg-stop, silent-path, clock-step, switchover,
// primary-kill, patroni-kill, pgbouncer-restart) or the end of one
// (restart, cont, heal).
type event struct {
	at   time.Time
	what string
	slot int
	inc  *incarnation
	f    *fault // the fault a restart or SIGCONT ends
}

// schedule plans the faults, one every --fault-every after --warmup, kill,
// freeze (and the optional kinds) in turn. No fault starts so late that
// its recovery and failover could not be seen before the steady window
// closes; recovery is how long a dead node takes to be recovered. A step
// of the clock back holds every task for the step, so it counts as an
// outage that long.
func (r *chaosRun) schedule(t0 time.Time, recovery time.Duration) {
	var patroni time.Duration
	if r.o.patroni {
		patroni = patroniOutage
	}
	tail := max(r.o.restartAfter, r.o.freezeFor, r.o.pgStop, r.o.silentPath, r.o.clockStep, patroni, r.o.pgbDown) + recovery + 4*time.Second
	kinds := faultKinds(r.o)
	for i, at := 0, t0.Add(r.o.warmup); !at.After(r.end.Add(-tail)); i, at = i+1, at.Add(r.o.faultEvery) {
		r.todo = append(r.todo, event{at: at, what: kinds[i%len(kinds)]})
	}
}

// faultKinds lists the faults o injects, in the order they take turns.
func faultKinds(o chaosOpts) []string {
	kinds := []string{"kill", "freeze"}
	if o.pgRestart != "" {
		kinds = append(kinds, "pg-restart")
	}
	if o.pgStop > 0 {
		kinds = append(kinds, "pg-stop")
	}
	if o.silentPath > 0 {
		kinds = append(kinds, "silent-path")
	}
	if o.clockStep > 0 && o.clockFailover {
		kinds = append(kinds, "clock-failover")
	} else if o.clockStep > 0 {
		kinds = append(kinds, "clock-step")
	}
	if o.patroni {
		kinds = append(kinds, patroniKinds...)
	}
	if o.pgbouncer {
		kinds = append(kinds, "pgbouncer-restart")
	}
	return kinds
}

// injectDue runs the events due by now, in time order.
func (r *chaosRun) injectDue(now time.Time) {
	sort.SliceStable(r.todo, func(i, j int) bool { return r.todo[i].at.Before(r.todo[j].at) })
	for len(r.todo) > 0 && !r.todo[0].at.After(now) {
		ev := r.todo[0]
		r.todo = r.todo[1:]
		r.inject(ev, now)
	}
}

func (r *chaosRun) inject(ev event, now time.Time) {
	switch ev.what {
	case "kill":
		r.strike("kill", syscall.SIGKILL, r.o.restartAfter, "restart")
	case "restart":
		if _, err := r.c.start(ev.slot); err != nil {
			fmt.Fprintf(os.Stderr, "easyjob chaos: restart slot %d: %v\n", ev.slot, err)
		}
		r.endFault(ev.f)
	case "freeze":
		r.strike("freeze", syscall.SIGSTOP, r.o.freezeFor, "cont")
	case "cont":
		_ = r.c.signal(ev.inc, syscall.SIGCONT)
		r.endFault(ev.f)
	case "pg-restart":
		f := &fault{Kind: "pg-restart", At: now}
		r.addFault(f)
		r.pgWG.Go(func() { r.restartPG(f) })
	case "pg-stop":
		f := &fault{Kind: "pg-stop", At: now}
		r.addFault(f)
		r.pgWG.Go(func() { r.stopPG(f) })
	case "silent-path":
		f := &fault{Kind: "silent-path", At: now}
		r.addFault(f)
		r.relay.Silence()
		r.todo = append(r.todo, event{at: now.Add(r.o.silentPath), what: "heal", f: f})
	case "heal":
		r.relay.Heal()
		r.endFault(ev.f)
	case "clock-step":
		r.stepClock()
	case "clock-failover":
		f := &fault{Kind: "clock-failover", At: now}
		r.addFault(f)
		r.pgWG.Go(func() { r.failoverClock(f) })
	case "pgbouncer-restart":
		f := &fault{Kind: "pgbouncer-restart", At: now}
		r.addFault(f)
		r.pgWG.Go(func() { r.restartPgBouncer(f) })
	case "switchover", "primary-kill", "patroni-kill", "etcd-loss":
		// At is set again when the fault is issued, once the leader is
		// known.
		f := &fault{Kind: ev.what, At: now}
		r.addFault(f)
		r.pgWG.Go(func() { r.patroniFault(f) })
	}
}

// strike sends sig to a victim (see pickVictim), records the fault kind
// and schedules the event then (restart, cont) that ends it after d.
func (r *chaosRun) strike(kind string, sig syscall.Signal, d time.Duration, then string) {
	inc := r.pickVictim()
	if inc == nil {
		return
	}
	_ = r.c.signal(inc, sig)
	// The fault's time is when the signal was sent, not the tick's: a tick
	// handled a few milliseconds late (the harness waits for a core in the
	// very second the nodes fire) let the victim start that second's runs
	// before the signal, and runs interrupted so were counted as
	// duplicates that no fault explains.
	at := time.Now()
	f := &fault{Kind: kind, Proc: inc.Name, At: at, idx: inc.Idx}
	r.addFault(f)
	r.todo = append(r.todo, event{at: at.Add(d), what: then, slot: inc.Slot, inc: inc, f: f})
}

// noteSelfExits records the node processes that exited without the
// harness killing them, as faults, and restarts their slots later.
func (r *chaosRun) noteSelfExits(now time.Time) {
	for _, inc := range r.c.all() {
		if !inc.exited() || r.seenExit[inc.Idx] {
			continue
		}
		r.seenExit[inc.Idx] = true
		inc.mu.Lock()
		expected, at := inc.expected, inc.exitedAt
		inc.mu.Unlock()
		if expected {
			continue
		}
		r.res.SelfExits = append(r.res.SelfExits, selfExit{Proc: inc.Name, At: at, Status: inc.exitInfo(), LastLog: inc.lastLog(15)})
		f := &fault{Kind: "exit", Proc: inc.Name, At: at, idx: inc.Idx}
		r.addFault(f)
		if now.Before(r.end) {
			r.todo = append(r.todo, event{at: now.Add(r.o.restartAfter), what: "restart", slot: inc.Slot, f: f})
		}
	}
}

// pickVictim picks the node a fault hits: a random running, unfrozen one;
// with --target busy (the default) among those that fired in the last 2s,
// so that a fault hits a node holding tasks (the default strategy lets one
// node keep most claims). It returns nil when fewer than two nodes run.
func (r *chaosRun) pickVictim() *incarnation {
	r.c.poll()
	var cands, busy []*incarnation
	recent := time.Now().Add(-2 * time.Second).UnixNano()
	for _, inc := range r.c.current() {
		if inc == nil || inc.isFrozen() {
			continue
		}
		cands = append(cands, inc)
		if fs := inc.tail.fires; len(fs) > 0 && fs[len(fs)-1].Start >= recent {
			busy = append(busy, inc)
		}
	}
	if len(cands) < 2 { // always leave a node to fail over to
		return nil
	}
	if r.o.target == "busy" && len(busy) > 0 {
		cands = busy
	}
	return cands[r.rng.IntN(len(cands))]
}

// restartPG runs the --pg-restart command and waits (two minutes at most)
// until PostgreSQL answers again; it runs on its own goroutine.
func (r *chaosRun) restartPG(f *fault) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", r.o.pgRestart).CombinedOutput()
	r.mu.Lock()
	if err != nil {
		f.PGCommandError = fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	r.mu.Unlock()
	r.waitPG(ctx)
	r.endFault(f)
}

// stopPG stops PostgreSQL (fast shutdown: every connection drops), keeps
// it down for --pg-stop, starts it and waits until it answers: an outage
// longer than the dead threshold, seen by every node at once.
func (r *chaosRun) stopPG(f *fault) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+r.o.pgStop)
	defer cancel()
	ctl := func(action string, extra ...string) {
		args := append([]string{"--skip-systemctl-redirect"}, strings.Fields(r.o.pgCluster)...)
		args = append(append(args, action), extra...)
		if out, err := exec.CommandContext(ctx, "pg_ctlcluster", args...).CombinedOutput(); err != nil {
			r.mu.Lock()
			f.PGCommandError = fmt.Sprintf("%s: %v: %s", action, err, strings.TrimSpace(string(out)))
			r.mu.Unlock()
		}
	}
	ctl("stop", "-m", "fast")
	sleepCtx(ctx, r.o.pgStop)
	ctl("start")
	r.waitPG(ctx)
	r.endFault(f)
}

// waitPG polls PostgreSQL until it answers or ctx ends.
func (r *chaosRun) waitPG(ctx context.Context) {
	for ctx.Err() == nil {
		pctx, pc := context.WithTimeout(ctx, 2*time.Second)
		perr := ping(pctx, r.o.admin)
		pc()
		if perr == nil {
			return
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// defaultPGCluster names the newest Debian cluster under /etc/postgresql
// as "VERSION main".
func defaultPGCluster() (string, error) {
	entries, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(entries) == 0 {
		return "", fmt.Errorf("no cluster under /etc/postgresql")
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) < len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	return names[len(names)-1] + " main", nil
}

func (r *chaosRun) addFault(f *fault) {
	r.mu.Lock()
	r.res.Faults = append(r.res.Faults, f)
	r.mu.Unlock()
	r.count[f.Kind]++
}

// endFault marks f as over now.
func (r *chaosRun) endFault(f *fault) {
	r.mu.Lock()
	f.Until = time.Now()
	r.mu.Unlock()
}
