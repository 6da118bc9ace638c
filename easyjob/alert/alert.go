package alert

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Kind is what a Rule watches.
type Kind = repository.AlertKind

// The kinds of rules.
const (
	// Failure: a run of the task failed (or timed out). One alert per
	// streak: further failures are counted in it (Event.Count) until a
	// success resolves it.
	Failure = repository.AlertFailure
	// ConsecutiveFailures: Count runs of the task failed in a row;
	// resolved by a success.
	ConsecutiveFailures = repository.AlertConsecutiveFailures
	// Late: a fire started more than After after its time; resolved by a
	// fire that starts within After.
	Late = repository.AlertLate
	// Missed: a fire was found late past its misfire threshold and its
	// misfire policy applied (run once now, skipped, caught up); resolved
	// by a fire on time.
	Missed = repository.AlertMissed
	// Deadman: the task has not succeeded for After (since its last
	// success, or since it was created); resolved by a success.
	Deadman = repository.AlertDeadman
	// NodeDied: a node stopped heartbeating (past the group's DeadAfter)
	// without shutting down; resolved when it heartbeats again, when a
	// node of the same name is live, or when its row is gone. Task is
	// ignored.
	NodeDied = repository.AlertNodeDied
	// NoHandler: no live node registers the task (its code was removed, or
	// every node that had it is down); resolved when one does.
	NoHandler = repository.AlertNoHandler
)

// Rule is an alert rule: what to watch and where to send it.
type Rule struct {
	// Name identifies the rule in the group: every node must give a rule
	// in code the same name (the default, made from its other fields,
	// does), since it is how the nodes agree that an alert was sent.
	Name string
	// Task is the task watched; "" watches every task of the group.
	Task string
	Kind Kind
	// Count is the failed runs in a row of ConsecutiveFailures (default 3).
	Count int
	// After is the threshold of Late and Deadman (required for them).
	After time.Duration
	// Notifiers deliver the rule's events; nil: Config.AlertNotifiers.
	Notifiers []Notifier
}

// DefaultName is the name r has when Name is "": its kind, task and
// threshold, e.g. "late:report:30s" or "node_died".
func (r Rule) DefaultName() string {
	parts := []string{string(r.Kind)}
	if r.Kind != NodeDied && r.Task != "" {
		parts = append(parts, r.Task)
	}
	switch r.Kind {
	case ConsecutiveFailures:
		parts = append(parts, strconv.Itoa(r.countOrDefault()))
	case Late, Deadman:
		parts = append(parts, r.After.String())
	}
	return strings.Join(parts, ":")
}

func (r Rule) countOrDefault() int {
	if r.Count <= 0 {
		return 3
	}
	return r.Count
}

// Normalize returns r with its defaults filled in (Name, Count), or an
// error naming what is wrong with it.
func (r Rule) Normalize() (Rule, error) {
	if r.Kind == ConsecutiveFailures {
		r.Count = r.countOrDefault()
	}
	if r.Kind == NodeDied {
		r.Task = ""
	}
	if r.Name == "" {
		r.Name = r.DefaultName()
	}
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// ErrInvalidRule is wrapped by the errors of Validate.
var ErrInvalidRule = errors.New("easyjob: invalid alert rule")

// Validate reports what is wrong with r, if anything.
func (r Rule) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidRule, r.Name, fmt.Sprintf(format, args...))
	}
	switch r.Kind {
	case Failure, Missed, NodeDied, NoHandler:
	case ConsecutiveFailures:
		if r.Count < 1 {
			return bad("consecutive_failures needs a count of at least 1 (got %d)", r.Count)
		}
	case Late, Deadman:
		if r.After <= 0 {
			return bad("%s needs a positive threshold (After; got %v)", r.Kind, r.After)
		}
	default:
		return bad("unknown kind %q (want one of %v)", r.Kind, repository.AlertKinds)
	}
	if strings.TrimSpace(r.Name) == "" || strings.ContainsAny(r.Name, "\x00\n") {
		return bad("a name is required, on one line")
	}
	return nil
}

// State is whether an Event fires or resolves.
type State string

// The states of an Event.
const (
	Firing   State = "firing"
	Resolved State = "resolved"
)

// Event is one alert as a Notifier receives it (the webhook's JSON body).
type Event struct {
	// ID identifies the alert in its group: its firing and its resolved
	// notification carry the same ID.
	ID    int64  `json:"id"`
	Group string `json:"group"`
	Rule  string `json:"rule"`
	Kind  Kind   `json:"kind"`
	State State  `json:"state"`
	// Subject is what the alert is about: the task's name, or "node 7".
	Subject string `json:"subject"`
	// Task is the task's name, "" for a node's death.
	Task string `json:"task,omitempty"`
	// Message says what happened, in a line ("report failed: boom").
	Message string `json:"message"`
	// Resolution says how it cleared (State resolved).
	Resolution string `json:"resolution,omitempty"`
	// Count is how many occurrences the alert absorbed while it was open
	// (failures of the streak).
	Count      int       `json:"count"`
	FiredAt    time.Time `json:"fired_at"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
}

// FromStore makes the Event a notifier receives of a stored event.
func FromStore(e repository.AlertEvent) Event {
	ev := Event{
		ID: e.ID, Group: e.Group, Rule: e.Rule, Kind: e.Kind, State: Firing, Subject: e.Subject,
		Message: e.Message, Count: e.Count, FiredAt: e.FiredAt,
	}
	if e.Kind != NodeDied {
		ev.Task = e.Subject
	}
	if !e.ResolvedAt.IsZero() {
		ev.State, ev.ResolvedAt, ev.Resolution = Resolved, e.ResolvedAt, e.ResolveMessage
	}
	return ev
}

// Notifier delivers alerts. Notify is called on the alerting goroutine
// of the node that delivers the event, one event at a time; it should
// return within ctx's deadline. An error makes the node try again later
// (with backoff, up to MaxAttempts times).
type Notifier interface {
	Notify(ctx context.Context, e Event) error
}

// MaxAttempts bounds the deliveries tried of one notification.
const MaxAttempts = 10

// Func is a Notifier from a Go function.
type Func func(ctx context.Context, e Event) error

// Notify calls f.
func (f Func) Notify(ctx context.Context, e Event) error { return f(ctx, e) }
