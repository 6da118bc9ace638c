package repository

import (
	"context"
	"time"
)

// Actor is who asked for an operator action, as the audit log records it.
type Actor struct {
	// Name is the user: the dashboard's authenticated user, the CLI's OS
	// user (or --actor), a service's own name.
	Name string `json:"name"`
	// Via is the tool: "cli", "dashboard", "client" (a Go program), "node"
	// (the group's own upkeep, e.g. removing a stale task).
	Via string `json:"via"`
	// From is where the request came from: a host name, a remote address.
	From string `json:"from"`
}

// AuditEntry is one recorded operator action.
type AuditEntry struct {
	ID    int64     `json:"id"`
	Group string    `json:"group"`
	At    time.Time `json:"at"` // the store's clock
	Actor
	// Action is what was done: pause, resume, trigger, reschedule, reset,
	// remove, prune.
	Action string `json:"action"`
	Task   string `json:"task,omitempty"` // the task acted on; "" for a group action
	// Detail says what changed (a new cron, the options of a removal, the
	// runs a prune deleted).
	Detail string `json:"detail,omitempty"`
}

// AuditFilter selects and pages audit entries, newest first.
type AuditFilter struct {
	Task     string    // "" for every task
	Since    time.Time // zero for no bound
	BeforeID int64     // page: only ids below this; 0 for the first page
	Limit    int       // 0 means 100
}

// AuditStore keeps the audit log. The control operations (Pause, Resume,
// Trigger, Reschedule, RemoveTask) record the entry their context
// carries (WithAudit) in the same transaction as the action, and only
// when the action found its task: an action is in the log exactly when it
// happened.
type AuditStore interface {
	// RecordAudit appends e (At is the store's now).
	RecordAudit(ctx context.Context, e AuditEntry) error
	// Audit lists the entries of group, newest first.
	Audit(ctx context.Context, group string, f AuditFilter) ([]AuditEntry, error)
}

type auditKey struct{}

// WithAudit returns ctx carrying e: the control operation called with it
// records e (its Group and Task set by the store) with the action.
func WithAudit(ctx context.Context, e AuditEntry) context.Context {
	return context.WithValue(ctx, auditKey{}, e)
}

// AuditFrom returns the entry ctx carries, if any.
func AuditFrom(ctx context.Context) (AuditEntry, bool) {
	e, ok := ctx.Value(auditKey{}).(AuditEntry)
	return e, ok
}

// AuditDefaults returns ctx with the action and detail of the audit entry
// it carries, if any, filled in where the caller left them empty.
func AuditDefaults(ctx context.Context, action, detail string) context.Context {
	e, ok := AuditFrom(ctx)
	if !ok {
		return ctx
	}
	if e.Action == "" {
		e.Action = action
	}
	if e.Detail == "" {
		e.Detail = detail
	}
	return WithAudit(ctx, e)
}
