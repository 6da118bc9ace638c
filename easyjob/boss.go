package easyjob

import (
	"context"
	"time"
)

// boss fires claims from the delay queue: one timer on the earliest fire,
// no polling. A claim that waits longer than StartDeadline for a worker is
// released so a peer can run it on time.
func (n *node) boss(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		due, next := n.queue.popDue(now)
		for _, c := range due {
			n.dispatch(ctx, c)
		}
		if late := n.pool.expire(now.Add(-n.cfg.StartDeadline)); len(late) > 0 {
			n.log.Warn().Int("claims", len(late)).Msg("easyjob: no free worker in time; releasing claims to peers")
			n.release(ctx, late, "no free worker")
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
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

// dispatch hands a due claim to a worker, or releases it when this node
// must not start it.
func (n *node) dispatch(ctx context.Context, c *claimed) {
	if !n.isHeld(c) {
		return
	}
	if n.stopping.Load() || n.suspect() {
		n.release(ctx, []*claimed{c}, "node stopping or silent")
		return
	}
	n.pool.submit(c)
}
