package easyjob

import (
	"context"
	"fmt"
	"os"
	"os/user"

	"github.com/easyjob-go/easyjob/repository"
)

// Actor is who asks for an operator action: the audit log records it
// with the action. Name is the user, Via the tool ("cli", "dashboard",
// "client" for a Go program), From where the request came from (a host,
// a remote address).
type Actor = repository.Actor

// AuditEntry is one operator action in the audit log: who (Actor), what
// (Action: pause, resume, trigger, reschedule, reset, remove, prune; Task;
// Detail), when (At, the store's clock).
type AuditEntry = repository.AuditEntry

// AuditFilter selects and pages audit entries, newest first: by task,
// since a time, before an id (the next page), at most Limit (default 100).
type AuditFilter = repository.AuditFilter

type actorKey struct{}

// WithActor returns ctx naming who acts: the Client's operator actions
// called with it are recorded under a. Without it, a Client records its
// default actor: the process's OS user, via "client", from its host.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// actorFrom returns the actor ctx names, or def.
func actorFrom(ctx context.Context, def Actor) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a.Name != "" {
		if a.Via == "" {
			a.Via = def.Via
		}
		return a
	}
	return def
}

// defaultActor is the process's OS user on its host, via "client".
func defaultActor() Actor {
	a := Actor{Name: os.Getenv("USER"), Via: "client"}
	if u, err := user.Current(); err == nil && u.Username != "" {
		a.Name = u.Username
	}
	if a.Name == "" {
		a.Name = "unknown"
	}
	a.From, _ = os.Hostname()
	return a
}

// audited returns ctx carrying the audit entry of action on task: the
// store records it in the action's own statement or transaction, so an
// action is in the log exactly when it happened.
func (c *Client) audited(ctx context.Context, action, task, detail string) context.Context {
	return repository.WithAudit(ctx, c.entry(ctx, action, task, detail))
}

// entry is the audit entry of action on task (none: a group action) by
// the actor ctx names.
func (c *Client) entry(ctx context.Context, action, task, detail string) AuditEntry {
	return AuditEntry{Group: c.group, Task: task, Actor: actorFrom(ctx, c.actor), Action: action, Detail: detail}
}

// Audit lists the group's audit log, newest first: every pause, resume,
// trigger, reschedule, reset, removal and prune made through a Client
// (the CLI and the dashboard included), and the removals of stale tasks
// the nodes made themselves.
func (c *Client) Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	es, err := c.store.Audit(ctx, c.group, f)
	if err != nil {
		return nil, fmt.Errorf("easyjob: read the audit log of group %q: %w", c.group, err)
	}
	return es, nil
}
