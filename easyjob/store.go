package easyjob

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository/instrument"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// wrapStore puts the call bounds (Config.CallTimeout), the observer's
// timing (when Config.Observer is set) and the health tracking in front of
// the store Run opened.
func (s *Scheduler) wrapStore(store repository.Store) repository.Store {
	hooks := []instrument.Hook{s.cfg.callBounds(), &s.health}
	if s.cfg.Observer != nil {
		hooks = append(hooks, &storeTimer{obs: s.cfg.Observer, group: s.cfg.Group})
	}
	return instrument.Wrap(store, hooks...)
}

// BulkCallFactor is how many CallTimeouts a bulk statement may take:
// registering the tasks, pruning history, recovering a dead node's
// tasks, marking or removing stale tasks.
const BulkCallFactor = 6

// callBounds bounds each store call (Config.CallTimeout): what keeps a
// node alive in its peers' eyes by DeadAfter too (an answer later than
// that is worth nothing), bulk statements by BulkCallFactor times more.
func (c Config) callBounds() instrument.Deadlines {
	beat, bulk := min(c.CallTimeout, c.DeadAfter), BulkCallFactor*c.CallTimeout
	return func(op string) time.Duration {
		switch op {
		case "Heartbeat", "LiveNodes", "TaskSet":
			return beat
		case "UpsertTasks", "PruneHistory", "RecoverAll", "Tasks", "MarkStale", "RemoveTask":
			return bulk
		}
		return c.CallTimeout
	}
}

// storeTimer reports each store call to the observer as an
// observe.EventStoreOp (Op is the method's name).
type storeTimer struct {
	obs   observe.Observer
	group string
	node  atomic.Int64 // set by RegisterNode, so events name the node
}

// Begin implements instrument.Hook.
func (t *storeTimer) Begin(string, time.Time) {}

// End implements instrument.Hook.
func (t *storeTimer) End(c instrument.Call) {
	if c.Op == "RegisterNode" && c.Err == nil {
		t.node.Store(int64(c.Node))
	}
	t.obs.Observe(observe.Event{Kind: observe.EventStoreOp, Group: t.group, Node: t.node.Load(), Op: c.Op, Duration: c.Took, Err: c.Err})
}

// openStore picks the store from cfg (Store, BunDB, DB, DSN, else a
// private memory store), migrating Postgres unless told not to. The
// returned func closes what openStore opened itself.
func openStore(ctx context.Context, cfg Config) (repository.Store, func(), error) {
	var pg *postgres.Store
	closer := func() {}
	pooler, _ := postgres.ParsePooler(cfg.Pooler) // validated
	switch {
	case cfg.Store != nil:
		return cfg.Store, closer, nil
	case cfg.BunDB != nil:
		pg = postgres.NewBun(cfg.BunDB, postgres.WithPooler(pooler))
	case cfg.DB != nil:
		pg = postgres.New(cfg.DB, postgres.WithPooler(pooler))
	case cfg.DSN != "":
		octx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		var err error
		pg, err = postgres.Open(octx, cfg.DSN, postgres.WithPooler(pooler))
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("easyjob: open %s: %w", postgres.RedactDSN(cfg.DSN), err)
		}
		closer = func() { _ = pg.Close() }
	default:
		return memory.New(), closer, nil
	}
	if !cfg.SkipMigrate {
		mctx, cancel := context.WithTimeout(ctx, BulkCallFactor*cfg.CallTimeout)
		defer cancel()
		if err := pg.Migrate(mctx); err != nil {
			closer()
			return nil, nil, fmt.Errorf("easyjob: migrate: %w", err)
		}
	}
	return pg, closer, nil
}
