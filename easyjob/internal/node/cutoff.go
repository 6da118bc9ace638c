package node

import (
	"context"
	"time"
)

// cutOffPoll is how often a held fire looks again at a node that is cut
// off by its heartbeat's age alone (no failed call to wait on).
const cutOffPoll = 20 * time.Millisecond

// cutOff reports that this node knows it cannot reach the database: a
// call failed and none answered since (back is closed when one does), or
// no heartbeat landed within LiveAfter (a silent path: the call hangs
// until its deadline, and the peers already see this node as not live).
func (n *Node) cutOff() (back <-chan struct{}, cut bool) {
	if back := n.outage.awaiting(); back != nil {
		return back, true
	}
	by := n.unseenBy.Load() // monotonic: a step of the local clock is not a silence
	return nil, by != 0 && mono() > time.Duration(by)
}

// awaitDatabase holds a fire that came due while this node is cut off.
// Started now, its run could not be recorded, and if the node is cut off
// alone a peer recovers the fire past DeadAfter and runs it again: the
// fire waits instead. It returns true when the database answers first
// (the fire runs, late by the wait) and false when the node turns suspect
// or ctx ends (the fire is not run here; the group runs it once).
func (n *Node) awaitDatabase(ctx context.Context) bool {
	if _, cut := n.cutOff(); !cut {
		return true // every fire asks: no timer, no defer on this path
	}
	return n.holdCutOff(ctx)
}

// holdCutOff waits while the node is cut off (awaitDatabase).
func (n *Node) holdCutOff(ctx context.Context) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		back, cut := n.cutOff()
		switch {
		case !cut:
			return true
		case n.suspect() || ctx.Err() != nil:
			return false
		}
		wait := cutOffPoll
		if back != nil {
			wait = time.Hour // the channel says when
		}
		if at, ok := n.silentAt(); ok {
			wait = max(min(wait, time.Until(at)), 0)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return false
		case <-back:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}
