package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// migrateFlags is the setup of migrate: --steps, --yes (for down).
func migrateFlags(fs *flag.FlagSet) action {
	steps := fs.Int("steps", 1, "migrate down: how many migrations to revert")
	yes := fs.Bool("yes", false, "migrate down: confirm dropping tables (and the history in them)")
	return func(ctx context.Context, e *env, args []string) error {
		switch args[0] {
		case "up":
			if err := e.store.Migrate(ctx); err != nil {
				return err
			}
		case "down":
			if *steps < 1 {
				return usagef("--steps must be at least 1 (got %d)", *steps)
			}
			if !*yes {
				return usagef("migrate down drops tables and their data: pass --yes to confirm")
			}
			if err := e.store.MigrateDown(ctx, *steps); err != nil {
				return err
			}
		case "status":
		default:
			return usagef("unknown migrate action %q: want up, down or status", args[0])
		}
		v, err := e.store.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		latest := postgres.LatestSchemaVersion()
		state := "up to date"
		switch {
		case v == 0:
			state = "not migrated"
		case v < latest:
			state = fmt.Sprintf("%d migration(s) pending", latest-v)
		case v > latest:
			state = "newer than this binary"
		}
		if e.json {
			err = e.emit(struct {
				Version int    `json:"version"`
				Latest  int    `json:"latest"`
				State   string `json:"state"`
			}{v, latest, state})
		} else {
			_, err = fmt.Fprintf(e.out, "schema version %d, latest %d: %s\n", v, latest, state)
		}
		if err == nil && v > latest {
			// This binary must not operate that database: say so in the status.
			err = fmt.Errorf("%w: version %d, this binary knows up to %d: upgrade easyjob", repository.ErrSchemaTooNew, v, latest)
		}
		return err
	}
}
