package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// failoverClock is the clock-failover fault (--clock-step with
// --clock-failover), on its own goroutine: a failover to a synchronous
// standby whose clock differs from the old primary's. The private server
// is stopped at once (pg_ctl -m immediate: every connection drops, as
// when a primary dies), its clock offset moves by the step (forward, then
// back on the next turn), and it starts again on the same data and port:
// the nodes find, on reconnecting, every committed row (as on a promoted
// synchronous standby) under a clock that jumped. f.Until is when the
// server accepted connections again; the step is dated then (clockStepsOf).
func (r *chaosRun) failoverClock(f *fault) {
	ctx, cancel := context.WithTimeout(r.ctx, 2*time.Minute)
	defer cancel()
	fail := func(err error) {
		r.mu.Lock()
		f.PGCommandError = err.Error()
		r.mu.Unlock()
	}
	s := r.clock
	next := nextClockOffset(s.offset, r.o.clockStep)
	step := next - s.offset
	if err := s.run(ctx, nil, s.pgCtl, "-D", s.data, "-m", "immediate", "-w", "-t", "30", "stop"); err != nil {
		fail(fmt.Errorf("stop the server: %w", err))
		return
	}
	r.mu.Lock()
	f.At = time.Now()
	r.mu.Unlock()
	if err := s.setOffset(next); err != nil {
		fail(err)
		return
	}
	if err := s.run(ctx, s.env, s.pgCtl, "-D", s.data, "-l", filepath.Join(s.dir, "postgres.log"), "-w", "-t", "60", "start"); err != nil {
		fail(fmt.Errorf("start the server: %w (log: %s)", err, s.logTail()))
		return
	}
	r.mu.Lock()
	f.Until, f.StepMS, f.step = time.Now(), ms(step), step
	r.mu.Unlock()
	r.checkClock(f, next)
}
