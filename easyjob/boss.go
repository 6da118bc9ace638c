package easyjob

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// boss fires claims from the delay queue: one timer on the earliest fire,
// no polling; the last wakeEarly before a fire is slept precisely. A claim that waits longer than StartDeadline for a worker is
// given back so a peer can run it on time.
func (n *node) boss(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		due, next := n.queue.popDue(now)
		fired, back := n.dispatch(now, due)
		// The jobs are already running: their starts go in one batch.
		n.starter.enqueue(fired)
		if len(back) > 0 {
			// Off the boss, in one statement: the next fires must not wait.
			n.pool.track(func() {
				n.release(n.bg, "node stopping or silent, or claim from before a silence", n.claims.drop(back...))
			})
		}
		if late := n.pool.expire(now.Add(-n.cfg.StartDeadline)); len(late) > 0 {
			n.log.Warn().Int("claims", len(late)).Msg("easyjob: no free worker in time; giving the fires back to peers")
			for _, c := range late {
				n.pool.track(func() { n.giveBack(c) })
			}
		}
		wait, precise := bossWait(next)
		if precise {
			sleepUntil(next)
			continue
		}
		if n.pool.hasWaiting() {
			wait = min(wait, n.cfg.StartDeadline/4)
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-n.queue.changed:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
	}
}

// dispatch fires the claims due at local time now: each takes a worker
// or waits for one, and its start is recorded in the pass's batch
// (fired). The others go back (back): the node is stopping or silent, or
// the claim was replaced, dropped or taken before a silence (releasing
// one no longer held is a fenced no-op). A burst goes in chunks of
// dispatchChunk, each taking each lock once: a lock per claim was most of
// the boss's time in a burst, and one pass over all of it (5 000 claims:
// 0.8 ms) held back the first job until the last claim was checked.
func (n *node) dispatch(now time.Time, due []*claim) (fired, back []*claim) {
	if len(due) == 0 {
		return nil, nil
	}
	if n.stopping.Load() || n.suspect() {
		return nil, due
	}
	// Only the cheap part here; the worker computes the next fire with this
	// same database time.
	dbNow := now.Add(n.offset.get())
	fired = make([]*claim, 0, len(due))
	for len(due) > 0 {
		k := min(len(due), dispatchChunk)
		ok, not := n.claims.fire(due[:k])
		due = due[k:]
		back = append(back, not...)
		for _, c := range ok {
			c.fire(dbNow)
			if c.misfire != "" {
				n.observe(Event{Kind: EventMisfire, Task: c.spec.name, Misfire: c.misfire, Lag: c.foundAt.Sub(c.task.NextStartTime)})
			}
		}
		n.pool.submit(now, ok...)
		fired = append(fired, ok...)
	}
	return fired, back
}

// dispatchChunk is how many due claims the boss fires per lock taken.
const dispatchChunk = 64

// giveBack closes a fired claim that found no free worker in time as
// skipped and puts the task back to pending at the same fire time, waking
// the peers, so one with a free worker runs it now.
func (n *node) giveBack(c *claim) {
	exec, appendRun, err := c.recorded(n.bg.Done(), nil)
	if err != nil {
		n.claims.drop(c)
		return
	}
	f := repository.Finish{
		Claim: c.fence(), ExecutionID: exec.ID, Status: repository.ExecSkipped,
		Error: "no free worker within the start deadline; fire given back to peers",
		Next:  c.task.NextStartTime, NextAttempt: max(c.task.Attempt, 1), Cron: c.task.Cron,
		Handoff: true,
	}
	if appendRun {
		f.Run = c.runRecord()
	}
	n.finishLater(c, func() repository.Finish { return f }, nil)
}
