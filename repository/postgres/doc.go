// Package postgres is the PostgreSQL implementation of repository.Store,
// the store every replica of a service shares in production.
//
// It is written on uptrace/bun (pgdialect) over jackc/pgx/v5 through
// database/sql. Queries are raw SQL with bun's "?" placeholders: the
// statements that matter (claim, finish, start) are single UPDATE/INSERT
// statements with data-modifying CTEs, which read more clearly as SQL than
// as query-builder chains, and each one is a single round trip.
//
// Every time that decides anything (due-ness, liveness, death, history
// timestamps) comes from the database's now(), never from the caller's
// clock; see docs/store-semantics.md for the contract every method follows.
//
// Writes that make work claimable (registering, creating or updating a
// runtime schedule, triggering, resuming, releasing, recovering,
// rescheduling) send pg_notify('easyjob', group) in
// the same statement, so Listen wakes the loaders of that group at once
// instead of at their next poll.
//
// The schema is versioned by the embedded files of package migrations and
// applied by Migrate under an advisory lock, so replicas may all migrate at
// start-up.
package postgres
