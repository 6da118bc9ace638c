package node

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// handoverLead is how long before its next fire a task this node handed
// to a peer is claimed back when no peer took it.
const handoverLead = 200 * time.Millisecond

// The node's handovers queue watches the tasks this node handed to a peer (a finish that
// gave the claim up because the strategy now names another node). Views
// of the live set differ for a moment while nodes join or leave, and the
// peer may not accept what this node gave it; shortly before the next
// fire, the node claims back each task nobody took (version-checked, so a
// peer that did take it wins) and fires it itself, on time. A hand-over
// thus never leaves a fire without an owner.

// watchHandover remembers t, handed over by a finish, until shortly before
// its next fire; a fire already due (a fire given back for want of a
// worker) is left to peers.
func (n *Node) watchHandover(t repository.Task, spec *spec.Spec) {
	if n.stopping.Load() || t.DueAt().Sub(n.dbNow()) <= handoverLead {
		return
	}
	at := n.toLocal(t.DueAt()).Add(-handoverLead)
	n.handovers.Push(claim.New(t, spec, at, n.claims.Epoch()))
}

// watchHandovers claims back, in one statement per pass, the handed-over
// tasks whose fire is near and that no peer took.
func (n *Node) watchHandovers(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due, next := n.handovers.PopDue(time.Now())
		if refs := n.takeBackRefs(due); len(refs) > 0 {
			if err := n.takeBack(ctx, refs); err != nil {
				n.log.Warn().Err(err).Int("tasks", len(refs)).Msg("easyjob: could not claim back handed-over tasks")
			}
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-n.handovers.Changed():
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
	}
}

// takeBackRefs keeps the watched tasks this node may still claim: not
// after a silence, not while stopping or silent.
func (n *Node) takeBackRefs(due []*claim.Claim) []repository.TaskRef {
	if len(due) == 0 || n.stopping.Load() || n.suspect() {
		return nil
	}
	refs := make([]repository.TaskRef, 0, len(due))
	for _, w := range due {
		if w.Epoch == n.claims.Epoch() {
			refs = append(refs, w.Task.Ref())
		}
	}
	return refs
}

// takeBack claims refs (each still pending at the version the hand-over
// wrote, or the claim loses) and queues the ones won for their fire.
func (n *Node) takeBack(ctx context.Context, refs []repository.TaskRef) error {
	won, err := n.claimRefs(ctx, refs)
	n.stats.takenBack.Add(int64(len(won)))
	if len(won) > 0 {
		n.log.Debug().Int("tasks", len(won)).Msg("easyjob: claimed back handed-over tasks no peer took")
	}
	return err
}
