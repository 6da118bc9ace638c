package node

import (
	"context"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// expireEvery: every this many recover passes, node rows dead for longer
// than NodeExpiry are deleted.
const expireEvery = 60

// clockStepped reports whether the database's clock stepped (a failover
// to a standby whose clock is ahead, an NTP step) within the time peers
// need to beat again under the new clock: DeadAfter plus a heartbeat.
// Until then a peer's heartbeat age is not evidence of its death, and
// after a step ahead every peer would look dead at once. It reads the
// clock itself, after the orphans were found: a step that made them
// orphans shows here even before the next heartbeat sees it.
func (n *Node) clockStepped(ctx context.Context) (bool, error) {
	sent := time.Now()
	now, err := n.store.Now(ctx)
	if err != nil {
		return false, err
	}
	received := time.Now()
	n.offset.observe(sent, received, now)
	if !n.offset.steppedWithin(n.cfg.DeadAfter+n.cfg.HeartbeatInterval, received) {
		return false, nil
	}
	if time.Since(n.clockWarned) > time.Minute {
		n.clockWarned = time.Now()
		n.log.Warn().Str("offset", dur(n.offset.get())).
			Msg("easyjob: the database's clock stepped; no peer is judged dead until every one has beaten under the new clock")
	}
	return true, nil
}

// recoverOrphans is one recover pass: find doing tasks whose node is dead
// or gone; for each, only the next-higher live node after the dead owner
// (wrapping to the lowest) resets it, with a version check. A node judges
// only once it has seen the database for DeadAfter (sawDatabaseFor).
func (n *Node) recoverOrphans(ctx context.Context) error {
	if n.stopping.Load() || n.suspect() || !n.sawDatabaseFor(n.cfg.DeadAfter) {
		return nil
	}
	n.recoverPasses++
	if n.recoverPasses%expireEvery == 0 {
		if k, err := n.store.ExpireNodes(ctx, n.cfg.Group, n.cfg.NodeExpiry); err != nil {
			return err
		} else if k > 0 {
			n.log.Info().Int("nodes", k).Msg("easyjob: expired long-dead node rows")
		}
	}
	if err := n.abandonBroadcasts(ctx); err != nil { // broadcast.go
		return err
	}
	orphans, err := n.store.Orphans(ctx, n.cfg.Group, n.cfg.DeadAfter)
	if n.hooks != nil && err == nil {
		n.hooks.RecoverScanned.send(len(orphans))
	}
	if err != nil || len(orphans) == 0 {
		return err
	}
	if stepped, err := n.clockStepped(ctx); err != nil || stepped {
		return err
	}
	live, err := n.store.LiveNodes(ctx, n.cfg.Group, n.cfg.LiveAfter)
	if err != nil {
		return err
	}
	var rs []repository.Recovery
	var tasks []repository.Task // rs[i] recovers tasks[i]
	for _, o := range orphans {
		if responsible(live, o.DeadNode) != n.id() {
			continue
		}
		r := repository.Recovery{Ref: o.Task.Ref(), DeadNode: o.DeadNode}
		spec, _ := n.specs[o.Task.Handler].ForRow(&o.Task)
		if spec != nil && spec.Opts.Jitter > 0 && o.Task.FireKind == "" && o.Task.Attempt <= 1 { // as the claim delays it (claim.New)
			r.Delay = schedule.JitterOf(o.Task.Name, o.Task.NextStartTime, spec.Opts.Jitter)
		}
		if spec != nil && spec.Opts.Recover == repository.RecoverSkip && o.Task.ParentID == 0 {
			sched, _ := spec.ScheduleOf(&o.Task) // a stored cron that does not parse: the registered one
			if next, ok := sched.Next(n.dbNow()); ok {
				r.Next = next
			}
		}
		rs = append(rs, r)
		tasks = append(tasks, o.Task)
	}
	if len(rs) == 0 {
		return nil
	}
	// One statement for all: a dead node may have held hundreds of tasks.
	errs, err := n.store.RecoverAll(ctx, rs)
	if err != nil {
		return err
	}
	recovered := 0
	for i, e := range errs {
		if e == nil { // ErrClaimLost: a peer acted first, or the owner came back
			recovered++
			n.observe(observe.Event{Kind: observe.EventRecovery, Count: 1, Task: tasks[i].Name, Lag: max(n.dbNow().Sub(tasks[i].DueAt()), 0)})
			n.log.Warn().Int64("task", int64(rs[i].Ref.ID)).Int64("dead_node", int64(rs[i].DeadNode)).Msg("easyjob: recovered task of a dead node")
		}
	}
	if recovered > 0 {
		n.poke()
	}
	return nil
}

// responsible returns the live node with the next id above dead, wrapping
// to the lowest; 0 when nobody is live.
func responsible(live []repository.Node, dead repository.NodeID) repository.NodeID {
	if len(live) == 0 {
		return 0
	}
	for _, nd := range live { // sorted by id
		if nd.ID > dead {
			return nd.ID
		}
	}
	return live[0].ID
}
