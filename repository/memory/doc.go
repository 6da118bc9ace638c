// Package memory is the embedded store of easy-job: the semantics of the
// PostgreSQL store (docs/store-semantics.md) inside one process, with no
// database. It suits single-process services, tests and examples; several
// in-process nodes may share one Store, which then plays the database.
//
// Ids come from counters starting at 1, every task write bumps the row's
// version exactly where Postgres would, fenced writes check (id, version,
// node, status doing), and every time is read from the store's clock
// (time.Now unless WithClock says otherwise) truncated to microseconds like
// timestamptz. Values are copied in and out: callers never share memory
// with the store. All methods are safe for concurrent use.
package memory
