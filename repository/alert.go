package repository

import (
	"context"
	"errors"
	"time"
)

// ErrAlertRuleNotFound means no alert rule of that name exists in the
// group.
var ErrAlertRuleNotFound = errors.New("easyjob: alert rule not found")

// AlertKind is what an alert rule watches (easyjob/alert documents each).
type AlertKind string

// Alert kinds.
const (
	AlertFailure             AlertKind = "failure"              // a run failed (the first of a streak)
	AlertConsecutiveFailures AlertKind = "consecutive_failures" // Count failed runs in a row
	AlertLate                AlertKind = "late"                 // a fire started more than After after its time
	AlertMissed              AlertKind = "missed"               // a fire missed (its misfire policy applied)
	AlertDeadman             AlertKind = "deadman"              // no successful run for After
	AlertNodeDied            AlertKind = "node_died"            // a node stopped heartbeating without leaving
	AlertNoHandler           AlertKind = "no_handler"           // no live node registers the task
)

// AlertKinds lists every kind, in the order above.
var AlertKinds = []AlertKind{AlertFailure, AlertConsecutiveFailures, AlertLate, AlertMissed, AlertDeadman, AlertNodeDied, AlertNoHandler}

// AlertRule is an alert rule stored at runtime (the CLI, the dashboard),
// as the store keeps it; rules in code live in each node's Config.
type AlertRule struct {
	ID    int64
	Group string
	// Name identifies the rule in its group (unique) and in its events.
	Name string
	// Task is the task watched; "" watches every task of the group.
	Task  string
	Kind  AlertKind
	Count int           // consecutive_failures: failed runs in a row
	After time.Duration // late, deadman: the threshold
	// WebhookURL and WebhookSecret, when the URL is set, send the rule's
	// events to this webhook instead of the nodes' notifiers.
	WebhookURL    string
	WebhookSecret string
	CreatedAt     time.Time
	CreatedBy     string
}

// AlertEvent is one alert: a rule's condition met by a subject (a task,
// a node), from when it fired until it was resolved. At most one event
// of a rule and subject is open (not resolved) at a time, and a (rule,
// subject, key) is recorded once: a node whose OpenAlert inserts it owns
// its delivery.
type AlertEvent struct {
	ID      int64
	Group   string
	Rule    string
	Kind    AlertKind
	Subject string // the task's name, or "node 7"
	Key     string // the occurrence: a fire, a node id, a time
	Message string
	// Count is how many occurrences the open event absorbed (failures of
	// the streak), 1 at first.
	Count          int
	FiredAt        time.Time
	ResolvedAt     time.Time // zero while open
	ResolveMessage string
	// Owner is the node that delivers the event's notifications;
	// Version changes with every write (TakeAlert is checked by it).
	Owner            NodeID
	Version          int64
	Delivered        bool // the firing notification was delivered
	ResolveDelivered bool // the resolved one was
	Attempts         int  // failed deliveries since the last success
	LastError        string
}

// Open reports whether e is not resolved.
func (e AlertEvent) Open() bool { return e.ResolvedAt.IsZero() }

// Pending reports whether a notification of e is still to deliver.
func (e AlertEvent) Pending() bool { return !e.Delivered || (!e.Open() && !e.ResolveDelivered) }

// AlertFilter selects AlertEvents.
type AlertFilter struct {
	// Live keeps the events open or with a notification pending.
	Live     bool
	BeforeID int64 // page: only ids below this; 0 for the first page
	Limit    int   // 0 means 100
}

// AlertDelivery reports a delivery attempt of an event's notification
// (MarkAlertDelivered).
type AlertDelivery struct {
	ID    int64
	Owner NodeID
	// Resolved says which notification: the resolved one, or the firing.
	Resolved bool
	// Err is "" for a delivery that succeeded, else why it failed.
	Err string
}

// AlertStore keeps the runtime alert rules and the alert events, which
// deduplicate alerts across the nodes of a group.
type AlertStore interface {
	// AlertRules lists the rules of group by name.
	AlertRules(ctx context.Context, group string) ([]AlertRule, error)
	// PutAlertRule writes r, replacing the rule of the same name, and
	// returns it as stored.
	PutAlertRule(ctx context.Context, r AlertRule) (AlertRule, error)
	// RemoveAlertRule deletes a rule; ErrAlertRuleNotFound if none.
	RemoveAlertRule(ctx context.Context, group, name string) error
	// OpenAlert records e (Group, Rule, Kind, Subject, Key, Message,
	// Owner) as fired at the store's now, unless its (rule, subject, key)
	// was recorded before or an event of its rule and subject is open:
	// won reports whether it was inserted (the caller then delivers it).
	// When it was not and an open event of another key is there, that
	// event's Count grows by one and it is returned.
	OpenAlert(ctx context.Context, e AlertEvent) (got AlertEvent, won bool, err error)
	// ResolveAlert resolves the open event of rule and subject (resolved
	// at the store's now, version+1; its owner stays and delivers the
	// resolved notification); won is false when none was open.
	ResolveAlert(ctx context.Context, group, rule, subject, message string) (got AlertEvent, won bool, err error)
	// AlertEvents lists events of group, newest first.
	AlertEvents(ctx context.Context, group string, f AlertFilter) ([]AlertEvent, error)
	// TakeAlert makes node the owner of event id if its version is
	// still version (version+1), and returns the row as written; else
	// ErrClaimLost. A peer takes over the delivery of a dead owner so.
	TakeAlert(ctx context.Context, id, version int64, node NodeID) (AlertEvent, error)
	// MarkAlertDelivered records a delivery attempt by d.Owner (version+1):
	// ErrClaimLost when the event is not d.Owner's any more.
	MarkAlertDelivered(ctx context.Context, d AlertDelivery) (AlertEvent, error)
	// PruneAlerts deletes the events of group resolved before before
	// whose notifications were all delivered, and returns how many.
	PruneAlerts(ctx context.Context, group string, before time.Time) (int, error)
}
