package node

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/easyjob/internal/claim"
	"github.com/easyjob-go/easyjob/repository"
)

// callInTx runs the job of c (an InTx task) in a transaction of its own,
// opened on the node's context: the job's context ends with its run, the
// transaction must outlive it until the finish commits it. A job that did
// not succeed has its transaction rolled back at once; a succeeded one
// hands it to its finish (completer), which commits the job's writes and
// the fenced finish together, or neither.
func (n *Node) callInTx(ctx context.Context, c *claim.Claim) firedOutcome {
	var o firedOutcome
	ftx, err := n.cfg.Tx.BeginFinish(n.bg)
	if err != nil {
		o.status, o.began = repository.ExecFailed, n.dbNow()
		o.err = fmt.Errorf("easyjob: the run's transaction did not begin, the job did not run: %w", err)
		n.log.Warn().Err(o.err).Str("task", c.Spec.Name).Msg("easyjob: job failed")
		return o
	}
	o.status, o.began, o.ran, o.err = n.call(ctx, c.Spec, &c.Task, c.Task.NextStartTime, ftx.Tx())
	if o.status != repository.ExecSucceeded {
		n.rollback(ftx, c)
		return o
	}
	o.tx = ftx
	return o
}

// rollback abandons tx (nil: none), the transaction of c's run.
func (n *Node) rollback(tx repository.FinishTx, c *claim.Claim) {
	if tx == nil {
		return
	}
	if err := tx.Rollback(); err != nil {
		n.log.Warn().Err(err).Str("task", c.Spec.Name).Msg("easyjob: could not roll back a run's transaction")
	}
}
