package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// env is what an operator command runs with: where it prints, its group
// and its connection to the database.
type env struct {
	out io.Writer
	// notes receives what is said beside the output (stderr), nil for
	// nowhere.
	notes  io.Writer
	json   bool
	group  string
	store  *postgres.Store
	client *easyjob.Client
	// liveAfter and deadAfter judge node rows (0: the library defaults).
	liveAfter, deadAfter time.Duration
}

// open connects to the database; unless raw it checks the schema and
// makes a client of the group.
func (e *env) open(ctx context.Context, dsn string, raw bool) error {
	s, err := postgres.Open(ctx, dsn)
	var parseErr *pgconn.ParseConfigError
	if errors.As(err, &parseErr) {
		return usagef("invalid --dsn: %w", parseErr)
	}
	if err != nil {
		return fmt.Errorf("cannot reach the database %s: %w", postgres.RedactDSN(dsn), unwrapConnect(err))
	}
	e.store = s
	if raw {
		return nil
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		e.close()
		return err
	}
	if v == 0 {
		e.close()
		return fmt.Errorf("the database %s has no easyjob schema: run 'easyjob migrate up'", postgres.RedactDSN(dsn))
	}
	if e.group == "" {
		if e.group, err = onlyGroup(ctx, s); err != nil {
			e.close()
			return err
		}
	}
	c, err := easyjob.NewClient(ctx, easyjob.Config{
		Store: s, Group: e.group, LiveAfter: e.liveAfter, DeadAfter: e.deadAfter,
		HeartbeatInterval: heartbeatFor(e.liveAfter),
	})
	if err != nil {
		e.close()
		return err
	}
	e.client = c
	return nil
}

// heartbeatFor keeps a custom --live-after valid (LiveAfter must be at
// least one heartbeat): 0 leaves the default.
func heartbeatFor(liveAfter time.Duration) time.Duration {
	if liveAfter > 0 && liveAfter < time.Second {
		return liveAfter
	}
	return 0
}

// close closes the client and the store (either may be nil).
func (e *env) close() {
	if e.client != nil {
		_ = e.client.Close()
	}
	if e.store != nil {
		_ = e.store.Close()
	}
}

// unwrapConnect drops the store's own "connect <dsn>:" prefix; open
// prints the (redacted) DSN once itself.
func unwrapConnect(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// emit prints v as indented JSON.
func (e *env) emit(v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
