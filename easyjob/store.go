package easyjob

import (
	"context"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// openStore picks the store from cfg (Store, BunDB, DB, DSN, else a
// private memory store), migrating Postgres unless told not to. The
// returned func closes what openStore opened itself.
func openStore(ctx context.Context, cfg Config) (repository.Store, func(), error) {
	var pg *postgres.Store
	closer := func() {}
	switch {
	case cfg.Store != nil:
		return cfg.Store, closer, nil
	case cfg.BunDB != nil:
		pg = postgres.NewBun(cfg.BunDB)
	case cfg.DB != nil:
		pg = postgres.New(cfg.DB)
	case cfg.DSN != "":
		var err error
		if pg, err = postgres.Open(ctx, cfg.DSN); err != nil {
			return nil, nil, fmt.Errorf("easyjob: open %s: %w", postgres.RedactDSN(cfg.DSN), err)
		}
		closer = func() { _ = pg.Close() }
	default:
		return memory.New(), closer, nil
	}
	if !cfg.SkipMigrate {
		if err := pg.Migrate(ctx); err != nil {
			closer()
			return nil, nil, fmt.Errorf("easyjob: migrate: %w", err)
		}
	}
	return pg, closer, nil
}
