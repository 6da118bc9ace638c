package node

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// load is one loader pass: read the due root tasks this node has functions
// for, keep those the strategy gives it, claim them in one statement and
// queue the ones won.
func (n *Node) load(ctx context.Context) error {
	if n.stopping.Load() || n.suspect() {
		return nil
	}
	if len(n.roots) == 0 {
		return nil
	}
	n.refreshCalendars(ctx)
	room := n.cfg.MaxClaims - n.claims.Len()
	if room <= 0 {
		return n.checkCrowded(ctx)
	}
	n.crowded.Store(false)
	if !n.picker.isLive() {
		// No heartbeat view yet (or it is stale): read it now.
		if err := n.refreshLive(ctx); err != nil {
			return err
		}
	}
	live := n.picker.liveView()
	// Ask for more rows than room: the strategy keeps about 1/len(live).
	limit := room * max(1, len(live))
	sent := time.Now()
	due, err := n.store.DueTasks(ctx, repository.DueQuery{
		Group: n.cfg.Group, Handlers: n.roots, Window: n.cfg.FetchWindow, Limit: limit,
	})
	if err != nil {
		return err
	}
	n.offset.observe(sent, time.Now(), due.Now)
	n.idle.Store(len(due.Tasks) == 0)
	refs, stolen, rejected := n.pick(live, due, room)
	if rejected {
		// Imminent tasks the strategy gives to others: a peer may have just
		// left (its claims released with a notification). Judge them on a
		// fresh live view rather than wait for the next heartbeat's.
		if err := n.refreshLive(ctx); err != nil {
			return err
		}
		refs, stolen, _ = n.pick(n.picker.liveView(), due, room)
	}
	won, err := n.claim(ctx, refs, stolen)
	if err == nil && len(refs)-won > len(refs)/2 && len(refs) >= minConflictReload && n.claims.Len() < n.cfg.MaxClaims {
		// Most were taken by peers, and there is room: load again at once
		// for the due tasks left, not a poll later (they may fire first).
		n.poke()
	}
	return err
}

// minConflictReload is the size of a claim whose loss makes the loader
// load again at once: a few lost rows wait for the next pass.
const minConflictReload = 100

// pick keeps the due tasks this node claims (picker.claims): stolen
// counts those taken past the steal threshold; rejected reports tasks left
// for others that fire within a poll interval.
func (n *Node) pick(live []repository.Node, due repository.Due, room int) (refs []repository.TaskRef, stolen int, rejected bool) {
	view := n.picker.view(live)
	// A node that cannot take every due task it may claim starts at its
	// own share of the list (its place in the live view), so that peers
	// reading the same list (a burst of one second's fires) claim
	// different rows first instead of racing for the same ones and
	// waiting a poll for the rest.
	start := 0
	if len(due.Tasks) > room && len(view) > 1 {
		for i, nd := range view {
			if nd.ID == n.picker.self {
				start = i * len(due.Tasks) / len(view)
			}
		}
		// Its share first; what peers leave is claimed on the next pass.
		room = min(room, (len(due.Tasks)+len(view)-1)/len(view))
	}
	for k := range due.Tasks {
		t := due.Tasks[(start+k)%len(due.Tasks)]
		if len(refs) == room {
			break
		}
		if ok, stole := n.picker.claims(view, t, due.Now); ok {
			refs = append(refs, t.Ref())
			if stole {
				stolen++
			}
			continue
		}
		rejected = rejected || t.DueAt().Sub(due.Now) < n.cfg.PollInterval
	}
	return refs, stolen, rejected
}

// loadEvery is the loader's wait after a pass. When nothing at all was due
// within the fetch window, the next pass can wait half the window
// (wake-ups still come at once by notification): an idle node costs a
// fraction of a query per second, and a task that enters the window
// meanwhile is found at least half the window before it fires. Waiting
// until just before the window could miss a fire left one poll interval
// ahead of it, less than loading and claiming a burst of tens of
// thousands of one-offs takes on a busy database: whole nodes fired their
// share of the burst up to a second late.
//
// The idle wait is shortened by a random part of up to a poll interval (at
// most half the wait): "nothing due" also describes tasks a peer holds for
// the moment. A fixed wait that is a whole number of a cron's periods kept
// a node passing in the same instant of each second, just while a peer
// held every task on an every-second cron, and where no notification
// came (no LISTEN: a store without it, a transaction pooler) it never saw
// the tasks the peer handed it: that peer ran them all.
func (n *Node) loadEvery() time.Duration {
	if n.idle.Load() {
		wait := max(n.cfg.PollInterval, n.cfg.FetchWindow/2)
		return wait - rand.N(min(n.cfg.PollInterval, wait/2))
	}
	return n.cfg.PollInterval
}

// claim claims refs (stolen of them past the steal threshold) in one
// statement and queues what it won; it returns how many it won.
func (n *Node) claim(ctx context.Context, refs []repository.TaskRef, stolen int) (int, error) {
	won, err := n.claimRefs(ctx, refs)
	n.stats.conflicts.Add(int64(len(refs) - len(won)))
	if err == nil && len(refs) > 0 {
		n.observe(observe.Event{Kind: observe.EventClaim, Count: len(won), Lost: len(refs) - len(won), Stolen: min(stolen, len(won))})
	}
	return len(won), err
}

// claimRefs claims refs in one statement, queues what it won for its fire
// and returns it.
func (n *Node) claimRefs(ctx context.Context, refs []repository.TaskRef) ([]repository.Task, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	defer n.claims.Hold()()
	// The epoch before the statement: a silence during its round trip (a
	// frozen process, a partition) may have let peers recover what it won
	// meanwhile, so such claims are void, never fired.
	epoch := n.claims.Epoch()
	won, err := n.store.Claim(ctx, n.id(), refs)
	if err != nil {
		n.dirty.Store(true)
		return nil, err
	}
	n.stats.claimed.Add(int64(len(won)))
	if n.stopping.Load() || n.claims.Epoch() != epoch {
		n.release(ctx, "claimed while stopping or across a silence", fencesOf(won))
		return nil, nil
	}
	for _, t := range won {
		spec := n.specs[t.Handler]
		if spec == nil {
			continue // cannot happen: the loader asks only for names it has; reconcile releases it
		}
		c := claim.New(t, spec, n.toLocal(t.DueAt()), epoch)
		if c.SchedErr != nil {
			n.log.Error().Err(c.SchedErr).Str("task", t.Name).Msg("easyjob: stored cron is invalid")
		}
		n.claims.Keep(c)
		n.queue.Push(c)
	}
	return won, nil
}

// refreshLive reads the live nodes into the picker's view, with the task
// sets of peers it has not seen before.
func (n *Node) refreshLive(ctx context.Context) error {
	live, err := n.store.LiveNodes(ctx, n.cfg.Group, n.cfg.LiveAfter)
	if err != nil {
		return err
	}
	if err := n.picker.learnSets(ctx, live, n.store.TaskSet); err != nil {
		// Not fatal: a node whose set is unknown counts as able to run anything.
		n.log.Debug().Err(err).Msg("easyjob: could not read a peer's task set")
	}
	n.picker.setLive(live)
	return nil
}
