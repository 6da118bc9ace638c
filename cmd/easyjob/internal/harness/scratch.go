package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// scratchDB is a database created for one measurement and dropped after it.
type scratchDB struct {
	admin string // DSN of the server's maintenance database (as given)
	name  string
	dsn   string // DSN of the scratch database
}

// createScratch creates easyjob_bench_<random> on the server of adminDSN and
// migrates it with the postgres store.
func createScratch(ctx context.Context, adminDSN string) (*scratchDB, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	name := "easyjob_bench_" + hex.EncodeToString(b[:])
	if err := adminExec(ctx, adminDSN, `CREATE DATABASE "`+name+`"`); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	dsn, err := postgres.WithDatabase(adminDSN, name)
	if err != nil {
		_ = adminExec(context.Background(), adminDSN, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
		return nil, err
	}
	db := &scratchDB{admin: adminDSN, name: name, dsn: dsn}
	s, err := postgres.Open(ctx, dsn)
	if err == nil {
		err = s.Migrate(ctx)
		_ = s.Close()
	}
	if err != nil {
		_ = db.drop() // the migrate error is the one to report
		return nil, fmt.Errorf("migrate %s: %w", name, err)
	}
	return db, nil
}

// drop drops the database, disconnecting whoever is still connected. It
// ignores the caller's context on purpose: clean-up must happen after a
// SIGINT too. It retries for a while (the server may be restarting).
func (d *scratchDB) drop() error {
	if d == nil {
		return nil
	}
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err = adminExec(ctx, d.admin, `DROP DATABASE IF EXISTS "`+d.name+`" WITH (FORCE)`)
		cancel()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("drop database %s: %w", d.name, err)
	}
	return nil
}

// dropOnReturn drops d when deferred by a function whose error result is
// *err: a failure to drop is printed, and returned unless *err already
// holds an error.
func (d *scratchDB) dropOnReturn(err *error) {
	if derr := d.drop(); derr != nil {
		fmt.Fprintf(os.Stderr, "easyjob: %v\n", derr)
		if *err == nil {
			*err = derr
		}
	}
}

// adminExec runs one statement on a short-lived connection to dsn.
func adminExec(ctx context.Context, dsn, stmt string) error {
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.DB().DB.ExecContext(ctx, stmt)
	return err
}

// ping reports whether the server of dsn answers a query now.
func ping(ctx context.Context, dsn string) error {
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Now(ctx)
	return err
}
