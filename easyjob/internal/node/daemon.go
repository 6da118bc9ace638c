package node

import (
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// A daemon task (TaskOptions.Daemon) is a fire that is due again as soon
// as its run ends: the claim machinery keeps one run going in the group
// (the claim is the lease), recovery moves it to a peer when its node
// dies, and a node cut off past DeadAfter cancels it (fenceSelf) before
// peers may take it. This file holds what differs from a cron task: when
// it starts again, and that a stopping node lets go of it at once.

// daemonRestart is when a daemon whose run ended with status starts
// again, from now: after repository.DaemonRestart, or, after its n-th
// failure in a row (failures before this run + 1), after that doubled
// n-1 times, at most repository.MaxDaemonBackoff.
func daemonRestart(now time.Time, failures int, status repository.ExecStatus) time.Time {
	if status != repository.ExecFailed && status != repository.ExecTimedOut {
		return now.Add(repository.DaemonRestart)
	}
	return now.Add(schedule.Backoff(failures+1, repository.DaemonRestart, repository.MaxDaemonBackoff))
}

// planDaemon sets the next fire of daemon claim c's finish f: its
// restart. The finish keeps the claim for it (the node restarts the
// daemon) unless the node stops or the strategy now gives the task to a
// peer: then the finish hands it over, waking the peers.
func (n *Node) planDaemon(c *claim.Claim, f *repository.Finish, status repository.ExecStatus) {
	f.Next, f.Done = daemonRestart(n.dbNow(), c.Task.Failures, status), false
}

// stopDaemons cancels the running daemons of a stopping node: unlike a
// cron job, a daemon does not end on its own, and a peer should take it
// over now, not after ShutdownGrace. Their runs are recorded cancelled.
func (n *Node) stopDaemons() {
	cause := &runCancelled{by: "its node's shutdown", at: n.dbNow()}
	for _, c := range n.pool.StopIf(func(c *claim.Claim) bool { return c.Spec.Opts.Daemon }, cause) {
		n.log.Info().Str("task", c.Spec.Name).Msg("easyjob: daemon stopped for the node's shutdown; a peer takes it over")
	}
}
