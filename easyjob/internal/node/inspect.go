package node

import (
	"context"

	"github.com/easyjob-go/easyjob/repository"
)

// What a running node shows of itself, for health probes, diagnostics
// and the easyjob package's tests. Each read is safe from any goroutine.

// Stats counts what the node did since it started.
type Stats struct {
	Claimed, Conflicts, Fired, Fenced, Released int64
	HandedOff, TakenBack, Voided                int64
}

// Stats returns the node's counts.
func (n *Node) Stats() Stats {
	s := &n.stats
	return Stats{
		Claimed: s.claimed.Load(), Conflicts: s.conflicts.Load(), Fired: s.fired.Load(),
		Fenced: s.fenced.Load(), Released: s.released.Load(),
		HandedOff: s.handedOff.Load(), TakenBack: s.takenBack.Load(), Voided: s.voided.Load(),
	}
}

// Held is how many claims the node holds.
func (n *Node) Held() int { return n.claims.Len() }

// Queued is how many claims wait in the delay queue.
func (n *Node) Queued() int { return n.queue.Len() }

// Idle reports that the loader's last pass found nothing due.
func (n *Node) Idle() bool { return n.idle.Load() }

// LiveView is the live node set the strategy decides on.
func (n *Node) LiveView() []repository.Node { return n.picker.liveView() }

// Housekeep runs one pass of the group's upkeep now (housekeeping.go).
func (n *Node) Housekeep(ctx context.Context) error { return n.housekeep(ctx) }

// PruneStale runs one removal of stale tasks now.
func (n *Node) PruneStale(ctx context.Context) error { return n.pruneStale(ctx) }
