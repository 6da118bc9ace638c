package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/easyjob-go/easyjob/migrations"
	"github.com/easyjob-go/easyjob/repository"
)

// migrateLockKey is the one-key advisory lock every migrator takes inside
// its transaction, so replicas migrating at the same start-up apply each
// version exactly once. The value is "easyjob" in ASCII.
const migrateLockKey int64 = 0x656173796a6f62

// migration is one embedded version with its up and (optional) down SQL.
type migration struct {
	version  int
	name     string
	up, down string
}

var migrationFile = regexp.MustCompile(`^(\d+)_(.+)\.(up|down)\.sql$`)

// loadMigrations reads migrations.FS, ordered by version.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*migration{}
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(migrations.FS, e.Name())
		if err != nil {
			return nil, err
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &migration{version: v, name: m[2]}
			byVersion[v] = mig
		}
		if m[3] == "up" {
			mig.up = string(body)
		} else {
			mig.down = string(body)
		}
	}
	out := make([]migration, 0, len(byVersion))
	for _, m := range byVersion {
		if m.up == "" {
			return nil, fmt.Errorf("easyjob/postgres: migration %04d_%s has no up file", m.version, m.name)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// LatestSchemaVersion is the highest version embedded in this binary.
func LatestSchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate applies the embedded migrations db lacks. See (*Store).Migrate.
func Migrate(ctx context.Context, db *sql.DB) error {
	return New(db).Migrate(ctx)
}

// Migrate applies, in order and in one transaction, every embedded
// migration not yet recorded in easyjob_schema_migrations. The transaction
// holds an advisory lock, so concurrent migrators (every replica at
// start-up) wait for each other and the later ones find nothing to do. A
// database recorded at a newer version than this binary knows is refused
// with ErrSchemaTooNew: an old binary must not write to a newer schema.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		applied, err := lockSchema(ctx, tx, ms)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.up); err != nil {
				return fmt.Errorf("easyjob/postgres: migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO easyjob_schema_migrations (version, applied_at) VALUES (?::int, now())`, m.version); err != nil {
				return fmt.Errorf("easyjob/postgres: record migration %04d: %w", m.version, err)
			}
		}
		return nil
	})
}

// MigrateDown reverts the newest `steps` applied migrations, newest first,
// in one transaction under the same lock as Migrate.
func (s *Store) MigrateDown(ctx context.Context, steps int) error {
	if steps <= 0 {
		return nil
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		applied, err := lockSchema(ctx, tx, ms)
		if err != nil {
			return err
		}
		for i := len(ms) - 1; i >= 0 && steps > 0; i-- {
			m := ms[i]
			if !applied[m.version] {
				continue
			}
			steps--
			if m.down == "" {
				return fmt.Errorf("easyjob/postgres: migration %04d_%s has no down file", m.version, m.name)
			}
			if _, err := tx.ExecContext(ctx, m.down); err != nil {
				return fmt.Errorf("easyjob/postgres: revert migration %04d_%s: %w", m.version, m.name, err)
			}
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM easyjob_schema_migrations WHERE version = ?::int`, m.version); err != nil {
				return fmt.Errorf("easyjob/postgres: unrecord migration %04d: %w", m.version, err)
			}
		}
		return nil
	})
}

// lockSchema takes the migration lock, makes sure the version table
// exists, refuses a schema newer than ms, and returns the applied set.
// The table is created under the lock: concurrent CREATE TABLE IF NOT
// EXISTS statements can otherwise fail on the catalog's unique index.
func lockSchema(ctx context.Context, tx bun.Tx, ms []migration) (map[int]bool, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?::bigint)`, migrateLockKey); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: migration lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS easyjob_schema_migrations (
  version    integer     PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return nil, fmt.Errorf("easyjob/postgres: create migrations table: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM easyjob_schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("easyjob/postgres: read schema version: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	highest := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
		highest = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	if highest > known {
		return nil, fmt.Errorf("easyjob/postgres: database schema version %d, this binary knows up to %d: %w",
			highest, known, repository.ErrSchemaTooNew)
	}
	return applied, nil
}

// SchemaVersion returns the highest applied migration, 0 for a database
// that was never migrated.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var exists bool
	if err := s.db.QueryRowContext(ctx,
		`SELECT to_regclass('easyjob_schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("easyjob/postgres: schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := s.db.QueryRowContext(ctx,
		`SELECT coalesce(max(version), 0) FROM easyjob_schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("easyjob/postgres: schema version: %w", err)
	}
	return v, nil
}
