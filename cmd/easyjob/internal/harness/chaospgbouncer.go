package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
)

// dbOutageKinds are the faults that keep every node from the database
// for a while (the server, the path to it or the pooler in between): a
// silence that meets one is a delay, not a lost fire, and each task's
// first fire after it is measured (Resume).
var dbOutageKinds = []string{"pg-restart", "pg-stop", "silent-path", "pgbouncer-restart", "clock-failover"}

// isDBOutage reports whether kind is one of dbOutageKinds.
func isDBOutage(kind string) bool {
	for _, k := range dbOutageKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// startChaosBouncer starts PgBouncer in pool_mode=transaction in front of
// o.admin's server and returns it with dsn (a database on that server)
// pointed at it, telling the nodes of the pooler unless --pgbouncer-untold.
func startChaosBouncer(ctx context.Context, o chaosOpts, dsn string) (*pgbouncer.Bouncer, string, error) {
	b, err := pgbouncer.Start(ctx, o.admin, pgbouncer.Options{PoolSize: o.pgbPool})
	if err != nil {
		return nil, "", fmt.Errorf("--pgbouncer: %w", err)
	}
	via, err := b.DSN(dsn)
	if err != nil {
		b.Stop()
		return nil, "", fmt.Errorf("--pgbouncer: %w", err)
	}
	if !o.pgbUntold {
		via += "&" + postgres.PoolerParam + "=" + postgres.PoolerTransaction.String()
	}
	return b, via, nil
}

// restartPgBouncer is the pgbouncer-restart fault, on its own goroutine:
// SIGKILL PgBouncer (every node's connections drop at once, the server
// rolls back what they had open), keep it down --pgbouncer-down, start it
// on the same port and wait until it answers (f.Until).
func (r *chaosRun) restartPgBouncer(f *fault) {
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute+r.o.pgbDown)
	defer cancel()
	if err := r.bouncer.Restart(ctx, r.o.pgbDown); err != nil {
		r.mu.Lock()
		f.PGCommandError = err.Error()
		r.mu.Unlock()
		return
	}
	r.endFault(f)
}

// keepBouncerLog copies PgBouncer's log into dir, which the run keeps.
func keepBouncerLog(b *pgbouncer.Bouncer, dir string) {
	data, err := os.ReadFile(b.LogPath())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "pgbouncer.log"), data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob chaos: keep pgbouncer.log: %v\n", err)
	}
}
