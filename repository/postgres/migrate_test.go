package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// openRaw opens a store on dsn without migrating it.
func openRaw(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func tableExists(t *testing.T, s *postgres.Store, name string) bool {
	t.Helper()
	var ok bool
	if err := s.DB().QueryRowContext(context.Background(), `SELECT to_regclass(?) IS NOT NULL`, name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// atVersion returns a store on a database of its own, migrated up and
// then down to schema version v, and how many steps down that was (to go
// there again after migrating up).
func atVersion(t *testing.T, v int) (*postgres.Store, int) {
	t.Helper()
	s := openRaw(t, pgtest.NewDatabase(t))
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	back := postgres.LatestSchemaVersion() - v
	if err := s.MigrateDown(ctx, back); err != nil {
		t.Fatal(err)
	}
	return s, back
}

// taskRowExists reports whether group has a task row named name, read
// with SQL of its own: after a down migration the store's reads may name
// columns the older schema lacks.
func taskRowExists(t *testing.T, s *postgres.Store, group, name string) bool {
	t.Helper()
	var ok bool
	if err := s.DB().QueryRowContext(context.Background(),
		`SELECT EXISTS (SELECT 1 FROM easyjob_tasks WHERE group_name = ? AND name = ?)`, group, name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestMigrateConcurrentAppliesOnce(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Ten replicas starting at once, each with its own pool.
	stores := make([]*postgres.Store, 10)
	for i := range stores {
		stores[i] = openRaw(t, dsn)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(stores))
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Migrate(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrator %d: %v", i, err)
		}
	}

	var rows, latest int
	if err := stores[0].DB().QueryRowContext(ctx,
		`SELECT count(*), coalesce(max(version), 0) FROM easyjob_schema_migrations`).Scan(&rows, &latest); err != nil {
		t.Fatal(err)
	}
	if want := postgres.LatestSchemaVersion(); latest != want || rows != want {
		t.Fatalf("recorded %d versions up to %d, want %d up to %d", rows, latest, want, want)
	}
	if v, err := stores[0].SchemaVersion(ctx); err != nil || v != latest {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, latest)
	}
}

func TestMigrateRerunIsNoop(t *testing.T) {
	s := pgtest.NewStore(t) // migrated once
	ctx := context.Background()
	var before time.Time
	if err := s.DB().QueryRowContext(ctx, `SELECT max(applied_at) FROM easyjob_schema_migrations`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var after time.Time
	var n int
	if err := s.DB().QueryRowContext(ctx,
		`SELECT max(applied_at), count(*) FROM easyjob_schema_migrations`).Scan(&after, &n); err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) || n != postgres.LatestSchemaVersion() {
		t.Fatalf("re-run changed the record: applied_at %v -> %v, %d rows", before, after, n)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	s := pgtest.NewStore(t)
	ctx := context.Background()
	newer := postgres.LatestSchemaVersion() + 1
	if _, err := s.DB().ExecContext(ctx,
		`INSERT INTO easyjob_schema_migrations (version, applied_at) VALUES (?, now())`, newer); err != nil {
		t.Fatal(err)
	}
	for name, op := range map[string]func() error{
		"up":   func() error { return s.Migrate(ctx) },
		"down": func() error { return s.MigrateDown(ctx, 1) },
	} {
		err := op()
		if !errors.Is(err, repository.ErrSchemaTooNew) {
			t.Fatalf("%s: err = %v, want ErrSchemaTooNew", name, err)
		}
		for _, v := range []int{newer, newer - 1} {
			if !strings.Contains(err.Error(), fmt.Sprint(v)) {
				t.Errorf("%s: error %q does not name version %d", name, err, v)
			}
		}
	}
}

func TestMigrateDownThenUp(t *testing.T) {
	s := pgtest.NewStore(t)
	ctx := context.Background()
	latest := postgres.LatestSchemaVersion()
	if err := s.MigrateDown(ctx, latest); err != nil {
		t.Fatal(err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("after down: version %d, %v", v, err)
	}
	for _, tbl := range []string{"easyjob_tasks", "easyjob_nodes", "easyjob_executions"} {
		if tableExists(t, s, tbl) {
			t.Errorf("after down: %s still exists", tbl)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != latest {
		t.Fatalf("after up: version %d, %v", v, err)
	}
	if _, err := s.RegisterNode(ctx, "g", "n", 1); err != nil {
		t.Fatalf("store unusable after down+up: %v", err)
	}
}

func TestSchemaVersionOfEmptyDatabase(t *testing.T) {
	s := openRaw(t, pgtest.NewDatabase(t))
	if v, err := s.SchemaVersion(context.Background()); err != nil || v != 0 {
		t.Fatalf("SchemaVersion = %d, %v; want 0", v, err)
	}
}
