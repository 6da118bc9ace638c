package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// The API's JSON bodies (docs/openapi.yaml names them in its schemas).

// scheduleJSON is a schedule to create (POST /tasks) or the new
// definition of one (PUT /tasks/{name}): easyjob.Schedule, its options
// spelled out.
type scheduleJSON struct {
	Name    string `json:"name"`
	Handler string `json:"handler"`
	// Cron or At (one-off, RFC 3339), not both.
	Cron     string          `json:"cron,omitempty"`
	At       *time.Time      `json:"at,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"` // any JSON; null for none
	Timezone string          `json:"timezone,omitempty"`
	// The policies, as in policyJSON (not embedded: a decoding error
	// names the field alone).
	Timeout           duration     `json:"timeout,omitempty"`
	MaxRetries        int          `json:"max_retries,omitempty"`
	RetryBackoff      duration     `json:"retry_backoff,omitempty"`
	Misfire           *misfireJSON `json:"misfire,omitempty"`
	SkipInterrupted   bool         `json:"skip_interrupted,omitempty"`
	EveryFromCreation bool         `json:"every_from_creation,omitempty"`
	Start             *time.Time   `json:"start,omitempty"`
	End               *time.Time   `json:"end,omitempty"`
	Calendar          string       `json:"calendar,omitempty"`
	Jitter            duration     `json:"jitter,omitempty"`
	Spread            duration     `json:"spread,omitempty"`
	PauseAfter        int          `json:"pause_after,omitempty"`
	Overlap           string       `json:"overlap,omitempty"`
	OverlapGrace      duration     `json:"overlap_grace,omitempty"`
	OverlapLimit      int          `json:"overlap_limit,omitempty"`
	MaxFires          int64        `json:"max_fires,omitempty"`
	Paused            bool         `json:"paused,omitempty"`        // create only; an update keeps the pause
	AllowUnknown      bool         `json:"allow_unknown,omitempty"` // easyjob.AllowUnknownHandler
}

// policies are the policies in asks for.
func (in scheduleJSON) policies() policyJSON {
	return policyJSON{
		Timeout: in.Timeout, MaxRetries: in.MaxRetries, RetryBackoff: in.RetryBackoff, Misfire: in.Misfire,
		SkipInterrupted: in.SkipInterrupted, EveryFromCreation: in.EveryFromCreation, Start: in.Start, End: in.End,
		Calendar: in.Calendar, Jitter: in.Jitter, Spread: in.Spread, PauseAfter: in.PauseAfter,
		Overlap: in.Overlap, OverlapGrace: in.OverlapGrace, OverlapLimit: in.OverlapLimit, MaxFires: in.MaxFires,
	}
}

// policyJSON are a schedule's policies, as a request gives them and as a
// task's JSON shows them.
type policyJSON struct {
	Timeout           duration     `json:"timeout,omitempty"`
	MaxRetries        int          `json:"max_retries,omitempty"`
	RetryBackoff      duration     `json:"retry_backoff,omitempty"`
	Misfire           *misfireJSON `json:"misfire,omitempty"`
	SkipInterrupted   bool         `json:"skip_interrupted,omitempty"`
	EveryFromCreation bool         `json:"every_from_creation,omitempty"`
	// Start and End bound the fires (easyjob.Window); absent: no bound.
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// Calendar names the group's exclusion calendar (easyjob.Calendar).
	Calendar string `json:"calendar,omitempty"`
	// Jitter delays each cron fire by up to this much (easyjob.Jitter).
	Jitter duration `json:"jitter,omitempty"`
	// Spread moves the grid by a fixed offset within this (easyjob.Spread).
	Spread duration `json:"spread,omitempty"`
	// PauseAfter pauses after this many failed runs in a row
	// (easyjob.PauseAfterFailures).
	PauseAfter int `json:"pause_after,omitempty"`
	// Overlap is what a fire due while the previous run runs does
	// (easyjob.Overlap), OverlapGrace terminate's wait (easyjob.OverlapGrace).
	Overlap      string   `json:"overlap,omitempty"`
	OverlapGrace duration `json:"overlap_grace,omitempty"`
	// OverlapLimit bounds allow_all's runs at once (easyjob.OverlapLimit).
	OverlapLimit int `json:"overlap_limit,omitempty"`
	// MaxFires finishes the schedule after this many fires (easyjob.MaxFires).
	MaxFires int64 `json:"max_fires,omitempty"`
}

// misfireJSON is the misfire policy: fire_once_now (the default), skip or
// catch_up (the newest CatchUp missed fires); Threshold is the lateness
// that makes a fire a misfire (0: the default, 5s).
type misfireJSON struct {
	Policy    string   `json:"policy"`
	Threshold duration `json:"threshold,omitempty"`
	CatchUp   int      `json:"catch_up,omitempty"`
}

// triggerJSON is the optional body of a trigger.
type triggerJSON struct {
	Args json.RawMessage `json:"args,omitempty"`
}

// backfillJSON is the body of POST /tasks/{name}/backfill.
type backfillJSON struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to,omitzero"`
}

// backfillReply answers a backfill: the fires it runs.
type backfillReply struct {
	Task  string      `json:"task"`
	Fires []time.Time `json:"fires"`
}

// schedule is the easyjob.Schedule in asks for; an option it cannot make
// gives an error wrapping easyjob.ErrInvalidOption.
func (in scheduleJSON) schedule() (easyjob.Schedule, error) {
	s := easyjob.Schedule{Name: in.Name, Handler: in.Handler, Cron: in.Cron, Paused: in.Paused}
	if in.At != nil {
		s.At = *in.At
	}
	if args := bytes.TrimSpace(in.Args); len(args) > 0 {
		s.Args = json.RawMessage(args)
	}
	opts, err := in.policies().options(in.Timezone)
	if err != nil {
		return s, fmt.Errorf("schedule %q: %w", in.Name, err)
	}
	s.Options = opts
	return s, nil
}

// createOptions qualify the create or update of in.
func (in scheduleJSON) createOptions() []easyjob.CreateOption {
	if in.AllowUnknown {
		return []easyjob.CreateOption{easyjob.AllowUnknownHandler()}
	}
	return nil
}

// options are the easyjob.Options of p in time zone tz; the library
// checks their values.
func (p policyJSON) options(tz string) ([]easyjob.Option, error) {
	var opts []easyjob.Option
	if tz != "" {
		opts = append(opts, easyjob.TZ(tz))
	}
	if p.Timeout != 0 {
		opts = append(opts, easyjob.Timeout(time.Duration(p.Timeout)))
	}
	if p.MaxRetries != 0 || p.RetryBackoff != 0 {
		opts = append(opts, easyjob.Retry(p.MaxRetries, time.Duration(p.RetryBackoff)))
	}
	if m := p.Misfire; m != nil {
		policy, err := m.policy()
		if err != nil {
			return nil, err
		}
		opts = append(opts, easyjob.Misfire(policy, time.Duration(m.Threshold)))
	}
	if p.SkipInterrupted {
		opts = append(opts, easyjob.SkipInterrupted())
	}
	if p.EveryFromCreation {
		opts = append(opts, easyjob.EveryFromCreation())
	}
	if p.Start != nil || p.End != nil {
		var start, end time.Time
		if p.Start != nil {
			start = *p.Start
		}
		if p.End != nil {
			end = *p.End
		}
		opts = append(opts, easyjob.Window(start, end))
	}
	if p.Calendar != "" {
		opts = append(opts, easyjob.Calendar(p.Calendar))
	}
	if p.Jitter != 0 {
		opts = append(opts, easyjob.Jitter(time.Duration(p.Jitter)))
	}
	if p.Spread != 0 {
		opts = append(opts, easyjob.Spread(time.Duration(p.Spread)))
	}
	if p.PauseAfter != 0 {
		opts = append(opts, easyjob.PauseAfterFailures(p.PauseAfter))
	}
	if p.Overlap != "" {
		o, err := repository.ParseOverlapPolicy(p.Overlap)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", easyjob.ErrInvalidOption, err)
		}
		opts = append(opts, easyjob.Overlap(o))
	}
	if p.OverlapLimit != 0 {
		opts = append(opts, easyjob.OverlapLimit(p.OverlapLimit))
	}
	if p.OverlapGrace != 0 {
		opts = append(opts, easyjob.OverlapGrace(time.Duration(p.OverlapGrace)))
	}
	if p.MaxFires != 0 {
		opts = append(opts, easyjob.MaxFires(p.MaxFires))
	}
	return opts, nil
}

// policy is the easyjob.MisfirePolicy m names.
func (m misfireJSON) policy() (easyjob.MisfirePolicy, error) {
	action := repository.MisfireAction(m.Policy)
	if m.CatchUp != 0 && action != repository.MisfireCatchUp {
		return easyjob.MisfirePolicy{}, fmt.Errorf("%w: misfire catch_up %d is for the policy catch_up (got %q)", easyjob.ErrInvalidOption, m.CatchUp, m.Policy)
	}
	switch action {
	case "", repository.MisfireFireOnceNow:
		return easyjob.FireOnceNow(), nil
	case repository.MisfireSkip:
		return easyjob.Skip(), nil
	case repository.MisfireCatchUp:
		if m.CatchUp < 1 {
			return easyjob.MisfirePolicy{}, fmt.Errorf("%w: misfire policy catch_up needs catch_up >= 1, the newest missed fires to run (got %d)", easyjob.ErrInvalidOption, m.CatchUp)
		}
		return easyjob.CatchUp(m.CatchUp), nil
	}
	return easyjob.MisfirePolicy{}, fmt.Errorf("%w: misfire policy %q: want fire_once_now, skip or catch_up", easyjob.ErrInvalidOption, m.Policy)
}

// policiesOf are the policies of stored options.
func policiesOf(o repository.TaskOptions) policyJSON {
	p := policyJSON{
		Timeout: duration(o.Timeout), MaxRetries: o.MaxRetries, RetryBackoff: duration(o.RetryBackoff),
		SkipInterrupted: o.Recover == repository.RecoverSkip, EveryFromCreation: o.EveryFromCreation,
	}
	if o.Misfire != "" || o.MisfireThreshold > 0 {
		p.Misfire = &misfireJSON{Policy: string(o.Misfire), Threshold: duration(o.MisfireThreshold), CatchUp: o.CatchUpMax}
	}
	if !o.Start.IsZero() {
		p.Start = &o.Start
	}
	if !o.End.IsZero() {
		p.End = &o.End
	}
	p.Calendar, p.Jitter, p.PauseAfter = o.Calendar, duration(o.Jitter), o.PauseAfter
	p.Spread = duration(o.Spread)
	if o.Overlap != repository.OverlapWait {
		p.Overlap = string(o.Overlap)
	}
	p.OverlapGrace, p.OverlapLimit, p.MaxFires = duration(o.OverlapGrace), o.OverlapLimit, o.MaxFires
	return p
}

// duration is a time.Duration in JSON: written as a Go duration string
// ("1m30s"), read from one or from a number of seconds.
type duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string or a number of seconds.
func (d *duration) UnmarshalJSON(b []byte) error {
	bad := fmt.Errorf("duration %s: want a Go duration string such as \"90s\" or \"1h30m\", or a number of seconds", b)
	if len(b) > 0 && b[0] == '"' {
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return bad
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return bad
		}
		*d = duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil || math.IsNaN(secs) || math.Abs(secs) > math.MaxInt64/float64(time.Second) {
		return bad
	}
	*d = duration(math.Round(secs * float64(time.Second)))
	return nil
}

// apiTask is a task as the API answers it: easyjob.TaskInfo and, where
// read, its policies.
type apiTask struct {
	easyjob.TaskInfo
	policyJSON
	// Options hides TaskInfo.Options: the API gives the policies as
	// fields of their own (policyJSON).
	Options *struct{} `json:"options,omitempty"`
}

// newAPITask is t with the policies of o (none when o is nil).
func newAPITask(t easyjob.TaskInfo, o *repository.TaskOptions) apiTask {
	a := apiTask{TaskInfo: t}
	if o != nil {
		a.policyJSON = policiesOf(*o)
	}
	return a
}

// taskList is a page of tasks, and how many match in all.
type taskList struct {
	Tasks  []apiTask `json:"tasks"`
	Total  int       `json:"total"`
	Capped bool      `json:"total_capped,omitempty"`
	Prev   string    `json:"prev_before,omitempty"`
	Next   string    `json:"next_after,omitempty"`
}

// removed are the tasks a removal removed, the named one first.
type removed struct {
	Removed []apiTask `json:"removed"`
}

// runList is a page of a task's runs; NextBeforeID pages on (0: the last
// page).
type runList struct {
	Runs         []easyjob.ExecutionInfo `json:"runs"`
	NextBeforeID int64                   `json:"next_before_id,omitempty"`
}

type nodeList struct {
	Nodes []easyjob.NodeInfo `json:"nodes"`
}

type handlerList struct {
	Handlers []easyjob.HandlerInfo `json:"handlers"`
}

// auditList is a page of the audit log; NextBeforeID pages on.
type auditList struct {
	Entries      []easyjob.AuditEntry `json:"entries"`
	NextBeforeID int64                `json:"next_before_id,omitempty"`
}

// errorJSON is every error answer: the library's message and a stable
// code.
type errorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}
