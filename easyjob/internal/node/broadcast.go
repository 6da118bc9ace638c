package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/dispatch"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// A broadcast task (TaskOptions.Broadcast) runs each fire once on every
// live node that registers it. No node claims its row (it is kept out of
// the loader's handlers, n.roots): each node fires it on its own, at its
// cron's times on the database's clock, from one goroutine per task
// (broadcastLoop), and records its own run of each fire
// (RunStore.StartBroadcast: the start key (task, node, fire, attempt 1,
// batch 0) is unique, so no node runs a fire twice). The job runs
// detached from the worker slots (dispatch.Pool.Detach: shutdown waits
// for it, cancels and crashes cancel it) and its end is written with
// EndRun. The running rows of a node that dies are closed abandoned by a
// peer's recover pass (abandonBroadcasts); the fire is not run again.
//
// What a node runs:
//   - only fires after it started (a node that joins mid-way runs the
//     next fire, not the one going on);
//   - nothing while it stops, is cut off from the database or may look
//     dead to its peers: a fire that came due then is not run late, and
//     no fire found later than the task's misfire threshold runs (after
//     a pause of the process, an outage, a resume);
//   - the cron in force (a Reschedule), read from the task row before
//     each fire, at most a poll interval before it; a paused, finished or
//     removed task runs nothing, and a fire whose definition changed
//     since the read starts nothing (StartBroadcast checks the revision).

// broadcastRead is the longest a broadcast loop waits without reading
// its task's row again (a pause, a reschedule, a removal are seen within
// it); the poll interval when that is shorter.
const broadcastRead = 5 * time.Second

// runBroadcasts runs one broadcast loop per broadcast task until ctx is
// done, and waits for them.
func (n *Node) runBroadcasts(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range n.broadcasts {
		wg.Go(func() { n.broadcastLoop(ctx, s) })
	}
	wg.Wait()
}

// broadcastLoop fires broadcast task s on this node until ctx is done.
func (n *Node) broadcastLoop(ctx context.Context, s *spec.Spec) {
	after := n.dbNow() // fires after the node started only
	failures := 0
	reread := min(n.cfg.PollInterval, broadcastRead)
	for ctx.Err() == nil {
		t, err := n.store.Task(ctx, n.cfg.Group, s.Name)
		switch {
		case errors.Is(err, repository.ErrTaskNotFound):
			// Removed: a registration (this node's restart, a peer's)
			// creates it anew.
			after = later(after, n.dbNow())
			if !schedule.Sleep(ctx, reread) {
				return
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := schedule.Backoff(failures, 100*time.Millisecond, max(reread, time.Second))
			n.outage.fail("broadcast "+s.Name, err, wait)
			if !schedule.Sleep(ctx, wait) {
				return
			}
			continue
		}
		failures = 0
		now := n.dbNow()
		if t.Paused || t.Status == repository.TaskPaused || t.Status == repository.TaskFinished || t.Status == repository.TaskRemoved {
			after = later(after, now) // fires while paused do not run on resume
			if !schedule.Sleep(ctx, reread) {
				return
			}
			continue
		}
		sched, err := s.ScheduleOf(&t)
		if err != nil {
			n.log.Warn().Err(err).Str("task", s.Name).Msg("easyjob: broadcast task")
		}
		fire, ok := sched.Next(after)
		if !ok {
			if !schedule.Sleep(ctx, reread) {
				return
			}
			continue
		}
		at := fire.Add(n.broadcastJitter(s, fire))
		if late := now.Sub(at); late > s.Opts.MisfireThreshold {
			// Missed (the node was away, paused, cut off): not run late.
			// Skip to the fires that are still on time.
			n.log.Debug().Str("task", s.Name).Time("fire", fire).Str("late", dur(late)).Msg("easyjob: broadcast fire missed; not run late")
			after = later(fire, now.Add(-s.Opts.MisfireThreshold))
			continue
		}
		if wait := at.Sub(now); wait > reread {
			if !schedule.Sleep(ctx, reread) {
				return
			}
			continue // read the row again before the fire
		}
		if !n.sleepUntil(ctx, n.toLocal(at)) {
			return
		}
		after = fire
		next, _ := sched.Next(fire)
		n.fireBroadcast(ctx, s, t, fire, next)
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// broadcastJitter is the fire's delay under the task's Jitter (the same
// on every node).
func (n *Node) broadcastJitter(s *spec.Spec, fire time.Time) time.Duration {
	if s.Opts.Jitter <= 0 {
		return 0
	}
	return schedule.JitterOf(s.Name, fire, s.Opts.Jitter)
}

// sleepUntil waits until local time at, to the millisecond, or until ctx
// is done; it reports whether ctx is still live.
func (n *Node) sleepUntil(ctx context.Context, at time.Time) bool {
	for {
		wait, precise := dispatch.Wait(at)
		if precise {
			if wait > 0 {
				dispatch.SleepUntil(at)
			}
			return ctx.Err() == nil
		}
		if !schedule.Sleep(ctx, wait) {
			return false
		}
	}
}

// fireBroadcast runs this node's run of fire of broadcast task s (row t,
// as read before the fire): record its start, then run the job detached;
// its end is recorded when it returns.
func (n *Node) fireBroadcast(ctx context.Context, s *spec.Spec, t repository.Task, fire, next time.Time) {
	if n.stopping.Load() || n.suspect() {
		return
	}
	if _, cut := n.cutOff(); cut {
		n.log.Debug().Str("task", s.Name).Time("fire", fire).Msg("easyjob: broadcast fire not run: the database is away")
		return
	}
	found := n.dbNow()
	x, err := n.store.StartBroadcast(ctx, repository.BroadcastStart{
		Task: t.ID, Node: n.id(), ScheduledAt: fire, Revision: t.Revision, Next: next,
	})
	if errors.Is(err, repository.ErrBroadcastNotStarted) {
		n.log.Debug().Err(err).Str("task", s.Name).Msg("easyjob: broadcast fire not started")
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			n.outage.fail("broadcast "+s.Name, err, 0)
		}
		return // not recorded: not run
	}
	if n.stopping.Load() || n.suspect() {
		// Began to stop or fell silent during the write: the run is not
		// started; its row is closed as abandoned now or by a peer.
		n.endDetached(repository.RunEnd{Task: t.ID, Node: n.id(), Run: broadcastRun(x), Status: repository.ExecAbandoned,
			Error: "not started: the node was stopping"})
		return
	}
	n.stats.fired.Add(1)
	t.NextStartTime, t.Attempt, t.NodeID = fire, 1, n.id()
	c := &claim.Claim{Task: t, Spec: s, FoundAt: found, Kind: repository.RunCron}
	n.pool.Detach(c, func(dctx context.Context) {
		row := c.Task
		runCtx, endRun := n.fired(dctx, s, &row, fire, found, "", repository.RunCron)
		status, began, took, log, err := n.call(runCtx, s, &row, fire, 0, nil, nil)
		endRun(observe.RunResult{Status: status, Err: err})
		n.endDetached(repository.RunEnd{
			Task: row.ID, Node: n.id(), Run: broadcastRun(x), Started: began, Ran: took, Status: status, Error: errText(err),
			PauseAfter: s.Opts.PauseAfter, Log: log,
		})
	})
}

// broadcastRun is the start key and kind of the run x started.
func broadcastRun(x repository.Execution) repository.Execution {
	return repository.Execution{ScheduledAt: x.ScheduledAt, Attempt: 1, Kind: repository.RunCron, Revision: x.Revision}
}

// abandonBroadcasts closes the running broadcast rows of dead peers, in
// a recover pass. The lowest node of the live view does it for all;
// not while the database's clock just stepped (every peer would look
// dead).
func (n *Node) abandonBroadcasts(ctx context.Context) error {
	if len(n.broadcasts) == 0 {
		return nil
	}
	if live := n.picker.liveView(); len(live) > 0 && live[0].ID != n.id() {
		return nil
	}
	if n.offset.steppedWithin(n.cfg.DeadAfter+n.cfg.HeartbeatInterval, time.Now()) {
		return nil
	}
	k, err := n.store.AbandonBroadcasts(ctx, n.cfg.Group, n.cfg.DeadAfter)
	if err != nil {
		return err
	}
	if k > 0 {
		n.log.Warn().Int("runs", k).Msg("easyjob: broadcast runs of dead nodes marked abandoned")
	}
	return nil
}
