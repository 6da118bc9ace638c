package node

import (
	"context"
	"errors"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// listen wakes the loader on store notifications (a task registered,
// triggered, resumed or released) so it need not wait for the next poll.
// Polling stays the fallback: a broken listener is restarted with backoff,
// and a store that cannot listen (a transaction pooler) is not asked again.
func (n *Node) listen(ctx context.Context, l repository.Notifier) {
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := l.Listen(ctx, n.cfg.Group, n.poke)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, repository.ErrNotifyUnavailable) {
			n.log.Info().Err(err).Msg("easyjob: polling only, no notifications")
			return
		}
		if time.Since(start) > time.Minute {
			attempt = 1
		}
		wait := schedule.Backoff(attempt, 200*time.Millisecond, 10*time.Second)
		ev := n.log.Warn()
		if n.outage.ongoing() {
			ev = n.log.Debug() // the outage has its own lines
		}
		ev.Err(err).Str("retry_in", dur(wait)).Msg("easyjob: notification listener stopped; polling meanwhile")
		if !schedule.Sleep(ctx, wait) {
			return
		}
	}
}
