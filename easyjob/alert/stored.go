package alert

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// ErrRuleNotFound means the group has no runtime rule of that name.
var ErrRuleNotFound = repository.ErrAlertRuleNotFound

// StoredRule is a rule added at runtime (easyjob alerts add, the
// dashboard, Client.PutAlertRule), as the database keeps it. Its secret
// is write-only: it is never shown, in JSON or anywhere else; Signed
// says whether there is one.
type StoredRule struct {
	Name  string        `json:"name"`
	Task  string        `json:"task,omitempty"`
	Kind  Kind          `json:"kind"`
	Count int           `json:"count,omitempty"`
	After time.Duration `json:"-"`
	// AfterText is After as a Go duration ("30s"), in JSON "after".
	AfterText string `json:"after,omitempty"`
	// WebhookURL, when set, receives the rule's alerts instead of the
	// nodes' notifiers, signed with WebhookSecret. JSON shows only its
	// scheme and host (RedactURL).
	WebhookURL    string    `json:"webhook_url,omitempty"`
	WebhookSecret string    `json:"-"`
	Signed        bool      `json:"signed"`
	CreatedAt     time.Time `json:"created_at,omitzero"`
	CreatedBy     string    `json:"created_by,omitempty"`
}

// MarshalJSON writes After as a duration string.
func (r StoredRule) MarshalJSON() ([]byte, error) {
	type plain StoredRule
	p := plain(r)
	if r.After > 0 {
		p.AfterText = r.After.String()
	}
	p.Signed = r.WebhookSecret != "" || r.Signed
	if r.WebhookURL != "" {
		p.WebhookURL = RedactURL(r.WebhookURL) // its path or query may be a token
	}
	return json.Marshal(p)
}

// Rule is r as a rule in force (its notifiers are the node's or its
// webhook's).
func (r StoredRule) Rule() Rule {
	return Rule{Name: r.Name, Task: r.Task, Kind: r.Kind, Count: r.Count, After: r.After}
}

// Check normalizes r (its name and count by default) and reports what
// is wrong with it.
func (r StoredRule) Check() (StoredRule, error) {
	if r.After == 0 && r.AfterText != "" {
		d, err := time.ParseDuration(r.AfterText)
		if err != nil {
			return StoredRule{}, fmt.Errorf("%w %q: after %q: want a Go duration (30s, 5m)", ErrInvalidRule, r.Name, r.AfterText)
		}
		r.After = d
	}
	n, err := r.Rule().Normalize()
	if err != nil {
		return StoredRule{}, err
	}
	r.Name, r.Task, r.Count = n.Name, n.Task, n.Count
	if r.WebhookURL != "" {
		if u, err := url.Parse(r.WebhookURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return StoredRule{}, fmt.Errorf("%w %q: the webhook URL does not parse (want http:// or https://)", ErrInvalidRule, r.Name)
		}
	}
	if r.WebhookSecret != "" && r.WebhookURL == "" {
		return StoredRule{}, fmt.Errorf("%w %q: a webhook secret without a webhook URL", ErrInvalidRule, r.Name)
	}
	return r, nil
}

// StoredRuleOf is the stored rule of the store's row.
func StoredRuleOf(r repository.AlertRule) StoredRule {
	return StoredRule{
		Name: r.Name, Task: r.Task, Kind: r.Kind, Count: r.Count, After: r.After, WebhookURL: r.WebhookURL,
		WebhookSecret: r.WebhookSecret, Signed: r.WebhookSecret != "", CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
	}
}

// Record is an alert as the history shows it: the event and how its
// delivery went.
type Record struct {
	Event
	// Owner is the node that delivers it.
	Owner            int64  `json:"owner"`
	Delivered        bool   `json:"delivered"`
	ResolveDelivered bool   `json:"resolve_delivered"`
	Attempts         int    `json:"attempts"`
	LastError        string `json:"last_error,omitempty"`
}

// RecordOf is the record of a stored event.
func RecordOf(e repository.AlertEvent) Record {
	return Record{
		Event: FromStore(e), Owner: int64(e.Owner), Delivered: e.Delivered, ResolveDelivered: e.ResolveDelivered,
		Attempts: e.Attempts, LastError: e.LastError,
	}
}
