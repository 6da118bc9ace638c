package node

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/dispatch"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// boss fires claims from the delay queue: one timer on the earliest fire,
// no polling; the last wakeEarly before a fire is slept precisely. A claim that waits longer than StartDeadline for a worker is
// given back so a peer can run it on time.
func (n *Node) boss(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		due, next := n.queue.PopDue(now)
		fired, back := n.dispatch(now, due)
		if len(fired) > 0 {
			n.completer.quietAfterBurst(now, len(fired))
		}
		// The jobs are already running: their starts go in one batch.
		n.starter.enqueue(fired)
		if len(back) > 0 {
			// Off the boss, in one statement: the next fires must not wait.
			n.pool.Track(func() {
				n.release(n.bg, "node stopping or silent, or claim from before a silence", n.claims.Drop(back...))
			})
		}
		if late := n.pool.Expire(now.Add(-n.cfg.StartDeadline)); len(late) > 0 {
			n.log.Warn().Int("claims", len(late)).Msg("easyjob: no free worker in time; giving the fires back to peers")
			for _, c := range late {
				n.pool.Track(func() { n.giveBack(c) })
			}
		}
		again := n.collector.check(now, next, n.queue.CountAt)
		wait, precise := dispatch.Wait(next)
		if precise {
			dispatch.SleepUntil(next)
			continue
		}
		if n.pool.HasWaiting() {
			wait = min(wait, n.cfg.StartDeadline/4)
		}
		if !again.IsZero() {
			wait = min(wait, time.Until(again))
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-n.queue.Changed():
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
func (n *Node) dispatch(now time.Time, due []*claim.Claim) (fired, back []*claim.Claim) {
	if len(due) == 0 {
		return nil, nil
	}
	if n.stopping.Load() || n.suspect() {
		return nil, due
	}
	// Only the cheap part here; the worker computes the next fire with this
	// same database time.
	dbNow := now.Add(n.offset.get())
	fired = make([]*claim.Claim, 0, len(due))
	for len(due) > 0 {
		k := min(len(due), dispatchChunk)
		ok, not := n.claims.Fire(due[:k])
		due = due[k:]
		back = append(back, not...)
		for _, c := range ok {
			c.Found(dbNow)
			c.Excluded = n.excluded(c)
			n.overlapDeadline(c)
			if c.Misfire != "" {
				n.observe(observe.Event{Kind: observe.EventMisfire, Task: c.Spec.Name, Misfire: c.Misfire, Lag: c.FoundAt.Sub(c.Task.NextStartTime.Add(c.Jitter))})
				if n.alerts != nil {
					n.alerts.Misfired(c.Spec.Name, c.Task.NextStartTime, c.Misfire, c.FoundAt.Sub(c.Task.NextStartTime.Add(c.Jitter)))
				}
			}
		}
		n.pool.Submit(now, ok...)
		fired = append(fired, ok...)
	}
	return fired, back
}

// dispatchChunk is how many due claims the boss fires per lock taken.
const dispatchChunk = 64

// giveBack puts a fired claim that found no free worker in time (or
// whose node stops before it began) back to pending at the same fire
// time, waking the peers, so one with a free worker runs it now. Its job
// never began, so its start record is withdrawn rather than closed
// (Finish.Withdraw): the history holds runs, and whichever node runs the
// fire later, this one included, records its run under the same key.
func (n *Node) giveBack(c *claim.Claim) {
	exec, _, err := c.Recorded(n.bg.Done(), nil)
	if err != nil {
		n.claims.Drop(c)
		return
	}
	next, kind, attempt := c.Row() // a backfill fire stays pending in its own column
	f := repository.Finish{
		Claim: c.Fence(), ExecutionID: exec.ID, Status: repository.ExecGoesOn, Withdraw: true,
		Next: next, NextAttempt: max(attempt, 1), NextKind: kind, Cron: c.Task.Cron, Revision: c.Task.Revision,
		Handoff: true,
	}
	n.finishLater(c, func() repository.Finish { return f }, nil)
}
