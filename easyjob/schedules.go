package easyjob

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/argschema"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// Schedule is a schedule created at runtime (Client.Create): a handler
// kind registered in code (Handle), fired on a cron with arguments. Its
// definition lives in the database; every live node that registers the
// handler picks it up within a poll, with no restart.
type Schedule struct {
	Name    string // unique in the group, like a task name
	Handler string // the kind given to Handle
	Cron    string // as for Register (5 or 6 fields, "@every 10m", "@at <RFC 3339 time>")
	// At makes a one-off schedule instead of a cron: it runs once at At
	// (Cron "@at <At>"), is recorded like any run, and then finishes.
	At time.Time
	// Args are the run's arguments, encoded as JSON (a json.RawMessage or
	// []byte is taken as JSON text); nil, or an empty one, runs with none.
	Args any
	// Options are the per-schedule policies: Timeout, Retry, TZ, Misfire,
	// SkipInterrupted, EveryFromCreation. Parent and InTx are refused.
	Options []Option
	Paused  bool // created paused (Create only; Update keeps the pause)
}

// CreateOption qualifies a Create or Update.
type CreateOption func(*createOpts)

type createOpts struct{ allowUnknown bool }

// AllowUnknownHandler accepts a handler kind that no live node registers:
// the schedule waits (its arguments unchecked) until a node with that
// handler starts.
func AllowUnknownHandler() CreateOption { return func(o *createOpts) { o.allowUnknown = true } }

// Create writes one schedule; see CreateMany.
func (c *Client) Create(ctx context.Context, s Schedule, opts ...CreateOption) (TaskInfo, error) {
	infos, err := c.CreateMany(ctx, []Schedule{s}, opts...)
	if err != nil {
		return TaskInfo{}, err
	}
	return infos[0], nil
}

// CreateMany writes schedules in one transaction, all or none. Each is
// checked before anything is written: its name, handler kind (a live node
// must register it, unless AllowUnknownHandler), cron, options, and
// arguments against the handler's argument type, with an error that
// names the schedule and the field (ErrInvalidName, ErrUnknownHandler,
// ErrInvalidCron, ErrInvalidOption, ErrInvalidArgs); a name already taken
// fails with ErrTaskExists. Each schedule's first fire is the cron's next
// after the store's now.
func (c *Client) CreateMany(ctx context.Context, ss []Schedule, opts ...CreateOption) ([]TaskInfo, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	k, err := c.scheduleChecker(ctx, opts)
	if err != nil {
		return nil, err
	}
	defs := make([]repository.ScheduleDef, len(ss))
	seen := make(map[string]bool, len(ss))
	for i, s := range ss {
		if seen[s.Name] {
			return nil, fmt.Errorf("%w: schedule %q given twice", ErrTaskExists, s.Name)
		}
		seen[s.Name] = true
		if defs[i], err = k.def(s); err != nil {
			return nil, err
		}
	}
	what := fmt.Sprintf("%d schedules", len(ss))
	if len(ss) == 1 {
		what = ss[0].Name
	}
	rows, err := c.store.CreateSchedules(c.audited(ctx, "create", "", ""), c.group, defs)
	if err != nil {
		return nil, fmt.Errorf("easyjob: create %s in group %q: %w", what, c.group, err)
	}
	infos := make([]TaskInfo, len(rows))
	for i, r := range rows {
		infos[i] = TaskInfoOf(r, "")
	}
	return infos, nil
}

// Update replaces the definition of the schedule s.Name (created at
// runtime; ErrNotDynamic for a task registered in code) with s, checked
// as by Create, and moves its next fire to the new cron's next. A fire
// already running completes with the definition it started with; the
// fires after it follow the new one (never a double fire). A pause is
// kept (s.Paused is ignored: use Pause and Resume).
func (c *Client) Update(ctx context.Context, s Schedule, opts ...CreateOption) (TaskInfo, error) {
	k, err := c.scheduleChecker(ctx, opts)
	if err != nil {
		return TaskInfo{}, err
	}
	k.update = true
	def, err := k.def(s)
	if err != nil {
		return TaskInfo{}, err
	}
	row, err := c.store.UpdateSchedule(c.audited(ctx, "update", s.Name, fmt.Sprintf("handler %s cron %q", def.Handler, def.Cron)), c.group, s.Name, def)
	if err != nil {
		return TaskInfo{}, c.wrap("update", s.Name, err)
	}
	return TaskInfoOf(row, ""), nil
}

// scheduleChecker reads what checking schedules needs: the store's now,
// the published handlers and the live nodes' task sets.
func (c *Client) scheduleChecker(ctx context.Context, opts []CreateOption) (*scheduleChecker, error) {
	k := &scheduleChecker{group: c.group, scheds: schedule.NewCache(maxCheckerCrons)}
	for _, o := range opts {
		if o != nil {
			o(&k.createOpts)
		}
	}
	var err error
	if k.now, err = c.store.Now(ctx); err != nil {
		return nil, fmt.Errorf("easyjob: read the database clock: %w", err)
	}
	if k.live, err = repository.LiveTaskSets(ctx, c.store, c.group, c.live); err != nil {
		return nil, fmt.Errorf("easyjob: read live nodes of group %q: %w", c.group, err)
	}
	if k.schemas, err = c.argSchemas(ctx); err != nil {
		return nil, fmt.Errorf("easyjob: %w", err)
	}
	k.calendars = sync.OnceValues(func() (map[string]bool, error) {
		cs, err := c.store.Calendars(ctx, c.group)
		names := make(map[string]bool, len(cs))
		for _, x := range cs {
			names[x.Name] = true
		}
		return names, err
	})
	return k, nil
}

// scheduleChecker turns Schedules into checked definitions.
type scheduleChecker struct {
	createOpts
	update  bool            // an Update (it re-times the row), not a Create
	scheds  *schedule.Cache // a batch repeats a few crons: each is parsed once
	group   string
	now     time.Time
	live    []repository.NodeTasks
	schemas map[string]*argschema.Schema // by handler kind, as published
	// calendars reads the group's calendar names, once, when a schedule
	// names one.
	calendars func() (map[string]bool, error)
}

// def checks s and returns its definition, first fire included.
func (k *scheduleChecker) def(s Schedule) (repository.ScheduleDef, error) {
	if err := checkName("schedule", s.Name); err != nil {
		return repository.ScheduleDef{}, err
	}
	if err := checkName("handler kind", s.Handler); err != nil {
		return repository.ScheduleDef{}, fmt.Errorf("schedule %q: %w", s.Name, err)
	}
	ts := &taskSpec{}
	for _, o := range s.Options {
		if o == nil {
			continue
		}
		if err := o(ts); err != nil {
			return repository.ScheduleDef{}, fmt.Errorf("schedule %q: %w", s.Name, err)
		}
	}
	if ts.Parent != "" || ts.InTx || ts.Opts.Broadcast {
		return repository.ScheduleDef{}, fmt.Errorf("%w: schedule %q: Parent, InTx and Broadcast are for tasks registered in code", ErrInvalidOption, s.Name)
	}
	ts.Name = s.Name
	if err := allowAllAlone(&ts.Spec); err != nil {
		return repository.ScheduleDef{}, err
	}
	if name := ts.Opts.Calendar; name != "" {
		names, err := k.calendars()
		if err != nil {
			return repository.ScheduleDef{}, fmt.Errorf("schedule %q: read the calendars: %w", s.Name, err)
		}
		if !names[name] {
			return repository.ScheduleDef{}, fmt.Errorf("%w: schedule %q names calendar %q, which group %q does not have (Client.SetCalendar)",
				ErrCalendarNotFound, s.Name, name, k.group)
		}
	}
	withDefaults(&ts.Opts)
	if !s.At.IsZero() {
		if s.Cron != "" {
			return repository.ScheduleDef{}, fmt.Errorf("%w: schedule %q: give Cron or At, not both", ErrInvalidCron, s.Name)
		}
		s.Cron = "@at " + s.At.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	sched, err := k.scheds.Parse(s.Cron, ts.Opts.Timezone)
	if err == nil && sched.Empty() {
		err = fmt.Errorf("%w: a schedule needs a cron expression", ErrInvalidCron)
	}
	if err != nil {
		return repository.ScheduleDef{}, fmt.Errorf("schedule %q: %w", s.Name, err)
	}
	args, err := encodeArgs(s.Args)
	if err != nil {
		return repository.ScheduleDef{}, fmt.Errorf("schedule %q: %w", s.Name, err)
	}
	if err := k.checkHandler(s.Name, s.Handler, args); err != nil {
		return repository.ScheduleDef{}, err
	}
	def := repository.ScheduleDef{Name: s.Name, Handler: s.Handler, Cron: s.Cron, Args: args, Options: ts.Opts, Paused: s.Paused}
	sched = sched.ForTask(s.Name, ts.Opts, k.now)
	next, ok := sched.Next(k.now)
	if at, once := sched.OneOff(); once && !ok {
		return repository.ScheduleDef{}, fmt.Errorf("%w: schedule %q: its one fire, %s, has passed (the database's clock reads %s)",
			ErrInvalidCron, s.Name, at.Format(time.RFC3339), k.now.Format(time.RFC3339))
	}
	if ok {
		def.NextStartTime = next
		if k.update {
			def.NextFires = nextFires(sched, k.now) // a re-timing: see repository.NextFires
		}
	} else {
		def.NextStartTime, def.Finished = k.now, true
	}
	return def, nil
}

// nextFires are the first fires of sched after now that a re-timing
// sends (repository.NextAfter): enough to pass any fire a node may have
// claimed ahead of time (within its fetch window).
func nextFires(sched schedule.Schedule, now time.Time) []time.Time {
	return repository.NextFires(sched.Next, now, maxNextFires, nextFiresHorizon)
}

// maxCheckerCrons bounds the distinct crons a batch's checker keeps parsed.
const maxCheckerCrons = 1024

// maxNextFires and nextFiresHorizon bound nextFires: an every-second cron
// sends 17 minutes of fires, an hourly one a day's.
const (
	maxNextFires     = 1024
	nextFiresHorizon = 24 * time.Hour
)

// checkHandler refuses a handler kind no live node registers (unless
// allowed) and arguments its published schema refuses.
func (k *scheduleChecker) checkHandler(name, kind, args string) error {
	schema, published := k.schemas[kind]
	if !registered(k.live, kind) && !k.allowUnknown {
		return fmt.Errorf("%w: schedule %q: none of the %d live node(s) of group %q registers handler %q (AllowUnknownHandler creates it waiting)",
			ErrUnknownHandler, name, len(k.live), k.group, kind)
	}
	if !published || args == "" {
		return nil
	}
	if err := schema.Check([]byte(args)); err != nil {
		return fmt.Errorf("%w: schedule %q, handler %q: %w", ErrInvalidArgs, name, kind, err)
	}
	return nil
}

// encodeArgs encodes a Schedule's or a trigger's arguments as JSON text;
// "" for none.
func encodeArgs(v any) (string, error) {
	var b []byte
	switch a := v.(type) {
	case nil:
		return "", nil
	case json.RawMessage:
		if len(a) == 0 {
			return "", nil // TaskInfo.Args of a schedule without arguments, given back
		}
		b = a
	case []byte:
		if len(a) == 0 {
			return "", nil
		}
		b = a
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return "", fmt.Errorf("%w: %w", ErrInvalidArgs, err)
		}
	}
	if !json.Valid(b) {
		return "", fmt.Errorf("%w: not JSON: %.60q", ErrInvalidArgs, b)
	}
	if string(b) == "null" {
		return "", nil
	}
	return string(b), nil
}

// TriggerOption qualifies a Trigger.
type TriggerOption func(*triggerOpts)

type triggerOpts struct {
	args    any
	hasArgs bool
}

// WithArgs runs the triggered fire with args (encoded as JSON, checked
// against the handler's argument type when it published one) instead of
// the schedule's own. The run's history row keeps them.
func WithArgs(args any) TriggerOption {
	return func(o *triggerOpts) { o.args, o.hasArgs = args, true }
}

// triggerArgs encodes and checks the arguments of a trigger of name.
func (c *Client) triggerArgs(ctx context.Context, name string, o triggerOpts) (string, error) {
	if !o.hasArgs {
		return "", nil
	}
	args, err := encodeArgs(o.args)
	if err != nil {
		return "", fmt.Errorf("easyjob: trigger %q: %w", name, err)
	}
	if args == "" {
		return "", nil
	}
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return "", c.wrap("trigger", name, err)
	}
	schemas, err := c.argSchemas(ctx)
	if err != nil {
		return "", fmt.Errorf("easyjob: trigger %q: %w", name, err)
	}
	if s, ok := schemas[handlerOf(t)]; ok {
		if err := s.Check([]byte(args)); err != nil {
			return "", fmt.Errorf("%w: trigger %q, handler %q: %w", ErrInvalidArgs, name, handlerOf(t), err)
		}
	}
	return args, nil
}

// argSchemas reads the argument schemas the group's handlers published,
// by kind.
func (c *Client) argSchemas(ctx context.Context) (map[string]*argschema.Schema, error) {
	hs, err := c.store.Handlers(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("read handlers of group %q: %w", c.group, err)
	}
	out := make(map[string]*argschema.Schema, len(hs))
	for _, h := range hs {
		var s argschema.Schema
		if json.Unmarshal(h.Schema, &s) == nil {
			out[h.Kind] = &s
		}
	}
	return out, nil
}

// handlerOf is the handler kind that runs t: its name for a task
// registered in code (rows from before handlers were have none stored).
func handlerOf(t repository.Task) string {
	if t.Handler == "" {
		return t.Name
	}
	return t.Handler
}

// HandlerInfo is a handler kind published by the group's nodes.
type HandlerInfo struct {
	Kind string `json:"kind"`
	// Schema is the JSON schema of its arguments (as the node's Go type
	// decodes them).
	Schema json.RawMessage `json:"schema"`
	// Live: a live node registers it now (schedules of a kind no live node
	// registers wait).
	Live bool `json:"live"`
}

// Handlers lists the handler kinds the group's nodes have published,
// sorted by kind.
func (c *Client) Handlers(ctx context.Context) ([]HandlerInfo, error) {
	hs, err := c.store.Handlers(ctx, c.group)
	if err != nil {
		return nil, fmt.Errorf("easyjob: read handlers of group %q: %w", c.group, err)
	}
	live, err := repository.LiveTaskSets(ctx, c.store, c.group, c.live)
	if err != nil {
		return nil, fmt.Errorf("easyjob: read live nodes of group %q: %w", c.group, err)
	}
	out := make([]HandlerInfo, len(hs))
	for i, h := range hs {
		out[i] = HandlerInfo{Kind: h.Kind, Schema: h.Schema, Live: registered(live, h.Kind)}
	}
	return out, nil
}

// registered reports whether one of the live nodes registers kind.
func registered(live []repository.NodeTasks, kind string) bool {
	for _, n := range live {
		if n.Registers(kind) {
			return true
		}
	}
	return false
}
