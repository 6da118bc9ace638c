package node

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/internal/alerting"
	"github.com/easyjob-go/easyjob/repository"
)

// The alerting service (internal/alerting): the node reports the rows
// its finishes wrote (finish.go: settle), the fires it starts
// (worker.go: fired) and the misfires it applies (boss.go); the service
// runs as one of the node's loops (Run), stopped with the loops that
// take new work.

// newAlerts returns the node's alerting, nil when cfg has none or the
// store cannot keep alerts.
func newAlerts(cfg Config, log zerolog.Logger, store repository.Runtime) *alerting.Service {
	as, ok := store.(alerting.Store)
	if cfg.Alerts == nil || !ok {
		return nil
	}
	c := *cfg.Alerts
	c.Group, c.LiveAfter, c.DeadAfter, c.Logger = cfg.Group, cfg.LiveAfter, cfg.DeadAfter, log
	return alerting.New(c, as)
}

// alertView is the node as the alerting service sees it.
type alertView struct{ n *Node }

func (v alertView) ID() repository.NodeID   { return v.n.id() }
func (v alertView) Live() []repository.Node { return v.n.picker.liveView() }
func (v alertView) Now() time.Time          { return v.n.dbNow() }
