package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// scheduleFlags are the definition flags of create and update: the
// handler kind, the cron, the arguments and the per-schedule options.
type scheduleFlags struct {
	fs                                     *flag.FlagSet
	handler, cron, at, args, tz, misfire   *string
	runTimeout, retryBackoff, misfireAfter *time.Duration
	jitter, spread, overlapGrace           *time.Duration
	retries, pauseAfter, overlapLimit      *int
	maxFires                               *int64
	overlap                                *string
	skipInterrupted, everyFromCreation     *bool
	start, end, calendar                   *string
	allowUnknown                           *bool
}

// addScheduleFlags registers the definition flags on fs; update's default
// to the schedule's current definition.
func addScheduleFlags(fs *flag.FlagSet, update bool) *scheduleFlags {
	keep := func(help, createDefault string) string {
		if update {
			return help + " (default: the current one)"
		}
		if createDefault != "" {
			return help + " (default " + createDefault + ")"
		}
		return help
	}
	f := &scheduleFlags{fs: fs}
	f.handler = fs.String("handler", "", keep("the handler kind that runs the schedule (easyjob.Handle in a node's code)", ""))
	f.cron = fs.String("cron", "", keep("when it fires: 5 or 6 cron fields, or \"@every 10m\"", ""))
	f.at = fs.String("at", "", "a one-off instead of --cron: run once at this time (RFC 3339, e.g. 2026-11-26T10:00:00Z, or a delay from now, e.g. 90s)")
	f.args = fs.String("args", "", keep("the arguments of its runs, as JSON (e.g. '{\"n\":1}'), checked against the handler's argument type; 'null' for none", "none"))
	f.tz = fs.String("tz", "", keep("evaluate the cron in this IANA time zone", "UTC"))
	f.runTimeout = fs.Duration("run-timeout", 0, keep("each run's deadline (0: none); --timeout bounds this command", "none"))
	f.retries = fs.Int("retries", 0, keep("re-run a failed fire up to N more times", "0"))
	f.retryBackoff = fs.Duration("retry-backoff", 0, keep("wait before the first retry, doubled for each further one", "1s"))
	f.misfire = fs.String("misfire", "", keep("what a fire found late does: fire_once_now, skip or catch_up[:N] (the newest N missed fires)", "fire_once_now"))
	f.misfireAfter = fs.Duration("misfire-after", 0, keep("the lateness that makes a fire a misfire", "5s"))
	f.skipInterrupted = fs.Bool("skip-interrupted", false, keep("do not re-run a fire interrupted by the death of its node", "off: re-run it"))
	f.everyFromCreation = fs.Bool("every-from-creation", false, keep("anchor an @every schedule at its creation instead of the Unix epoch", ""))
	f.start = fs.String("start", "", keep("no fire before this time (RFC 3339; '' for no bound)", "none"))
	f.end = fs.String("end", "", keep("no fire after this time (RFC 3339; '' for no bound): the schedule finishes after its last run", "none"))
	f.jitter = fs.Duration("jitter", 0, keep("delay each cron fire by up to this much, the same delay on every node (0: none)", "none"))
	f.spread = fs.Duration("spread", 0, keep("move the whole grid by a fixed offset in [0, this) hashed from the name, the same on every node: many schedules on one cron come due over it (0: none)", "none"))
	f.pauseAfter = fs.Int("pause-after", 0, keep("pause the schedule after this many failed runs in a row (0: never)", "never"))
	f.overlap = fs.String("overlap", "", keep("what a fire due while the previous run still runs does: wait, skip, buffer_one, buffer_all, cancel, terminate or allow_all", "wait"))
	f.overlapGrace = fs.Duration("overlap-grace", 0, keep("how long --overlap terminate waits for a cancelled run before the next fire runs without it", "10s"))
	f.overlapLimit = fs.Int("overlap-limit", 0, keep("how many runs --overlap allow_all lets go on at once (1 to 1000)", "10"))
	f.maxFires = fs.Int64("max-fires", 0, keep("finish the schedule once this many of its fires ran (0: no bound)", "no bound"))
	f.calendar = fs.String("calendar", "", keep("skip the fires this exclusion calendar of the group excludes ('easyjob calendar'; '' for none)", "none"))
	f.allowUnknown = fs.Bool("allow-unknown", false, "accept a handler kind no live node registers: the schedule waits, its arguments unchecked, until a node with that handler starts")
	return f
}

// set reports whether the command line gave the flag name.
func (f *scheduleFlags) set(name string) bool { return isSet(f.fs, name) }

// schedule builds the Schedule name from the flags given, over cur (the
// current definition; the zero Task for a create).
func (f *scheduleFlags) schedule(name string, cur repository.Task) (easyjob.Schedule, error) {
	s := easyjob.Schedule{Name: name, Handler: cur.Handler, Cron: cur.Cron}
	if cur.Args != "" {
		s.Args = json.RawMessage(cur.Args)
	}
	if f.set("handler") {
		s.Handler = *f.handler
	}
	if f.set("cron") {
		s.Cron = *f.cron
	}
	if f.set("args") {
		s.Args = json.RawMessage(*f.args)
	}
	if f.set("at") {
		at, err := parseAt(*f.at, time.Now())
		if err != nil {
			return s, err
		}
		if f.set("cron") {
			return s, usagef("give --cron or --at, not both")
		}
		s.At, s.Cron = at, ""
	}
	switch {
	case strings.TrimSpace(s.Handler) == "":
		return s, usagef("--handler is required: the handler kind a node registers (easyjob.Handle)")
	case strings.TrimSpace(s.Cron) == "" && s.At.IsZero():
		return s, usagef("--cron (or --at) is required, e.g. --cron '*/5 * * * *', --cron '@every 10m' or --at 2026-11-26T10:00:00Z")
	}

	o := cur.Options
	if f.set("tz") {
		o.Timezone = *f.tz
	}
	for _, err := range []error{
		nonNegative(f, "run-timeout", f.runTimeout, &o.Timeout),
		nonNegative(f, "retries", f.retries, &o.MaxRetries),
		nonNegative(f, "retry-backoff", f.retryBackoff, &o.RetryBackoff),
		nonNegative(f, "misfire-after", f.misfireAfter, &o.MisfireThreshold),
		nonNegative(f, "pause-after", f.pauseAfter, &o.PauseAfter),
		nonNegative(f, "jitter", f.jitter, &o.Jitter),
		nonNegative(f, "spread", f.spread, &o.Spread),
		nonNegative(f, "overlap-grace", f.overlapGrace, &o.OverlapGrace),
		nonNegative(f, "max-fires", f.maxFires, &o.MaxFires),
		nonNegative(f, "overlap-limit", f.overlapLimit, &o.OverlapLimit),
	} {
		if err != nil {
			return s, err
		}
	}
	if f.set("misfire") {
		action, n, err := parseMisfire(*f.misfire)
		if err != nil {
			return s, err
		}
		o.Misfire, o.CatchUpMax = action, n
	}
	if f.set("overlap") {
		p, err := repository.ParseOverlapPolicy(*f.overlap)
		if err != nil {
			return s, usageError{err}
		}
		o.Overlap = p
	}
	if f.set("skip-interrupted") {
		o.Recover = repository.RecoverRerun
		if *f.skipInterrupted {
			o.Recover = repository.RecoverSkip
		}
	}
	if f.set("every-from-creation") {
		o.EveryFromCreation = *f.everyFromCreation
	}
	if f.set("calendar") {
		o.Calendar = *f.calendar
	}
	for _, b := range []struct {
		flag string
		v    *string
		into *time.Time
	}{{"start", f.start, &o.Start}, {"end", f.end, &o.End}} {
		if !f.set(b.flag) {
			continue
		}
		*b.into = time.Time{}
		if *b.v != "" {
			t, err := time.Parse(time.RFC3339, *b.v)
			if err != nil {
				return s, usagef("--%s %q: want an RFC 3339 time (2026-12-01T00:00:00Z), or '' for no bound", b.flag, *b.v)
			}
			*b.into = t
		}
	}
	s.Options = easyjob.OptionsOf(o)
	return s, nil
}

// parseAt reads --at: an RFC 3339 time, or a delay after now.
func parseAt(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(d).Truncate(time.Second).Add(time.Second), nil
	}
	return time.Time{}, usagef("--at %q: want an RFC 3339 time (2026-11-26T10:00:00Z) or a delay (90s, 2h)", v)
}

// nonNegative copies the value v of flag name into into when the command
// line gave the flag, refusing a negative one.
func nonNegative[T int | int64 | time.Duration](f *scheduleFlags, name string, v, into *T) error {
	if !f.set(name) {
		return nil
	}
	if *v < 0 {
		return usagef("--%s must not be negative (got %v)", name, *v)
	}
	*into = *v
	return nil
}

// createOptions is AllowUnknownHandler when --allow-unknown is given.
func (f *scheduleFlags) createOptions() []easyjob.CreateOption {
	if *f.allowUnknown {
		return []easyjob.CreateOption{easyjob.AllowUnknownHandler()}
	}
	return nil
}

// parseMisfire reads --misfire: fire_once_now, skip, catch_up (one missed
// fire) or catch_up:N.
func parseMisfire(s string) (repository.MisfireAction, int, error) {
	bad := usagef("--misfire %q: want fire_once_now, skip, catch_up or catch_up:N (N >= 1)", s)
	action, count, hasCount := strings.Cut(strings.TrimSpace(s), ":")
	switch repository.MisfireAction(action) {
	case repository.MisfireFireOnceNow, repository.MisfireSkip:
		if hasCount {
			return "", 0, bad
		}
		return repository.MisfireAction(action), 0, nil
	case repository.MisfireCatchUp:
		n := 1
		if hasCount {
			var err error
			if n, err = strconv.Atoi(count); err != nil || n < 1 {
				return "", 0, bad
			}
		}
		return repository.MisfireCatchUp, n, nil
	}
	return "", 0, bad
}

// createFlags is the setup of create: the definition flags and --paused.
func createFlags(fs *flag.FlagSet) action {
	f := addScheduleFlags(fs, false)
	paused := fs.Bool("paused", false, "create it paused: it fires once 'easyjob resume NAME' lets it")
	return func(ctx context.Context, e *env, args []string) error {
		s, err := f.schedule(args[0], repository.Task{})
		if err != nil {
			return err
		}
		s.Paused = *paused
		t, err := e.client.Create(ctx, s, f.createOptions()...)
		if err != nil {
			return unknownHint(err)
		}
		return e.replySchedule(ctx, "created", t)
	}
}

// updateFlags is the setup of update: the definition flags, each
// defaulting to the schedule's current value.
func updateFlags(fs *flag.FlagSet) action {
	f := addScheduleFlags(fs, true)
	return func(ctx context.Context, e *env, args []string) error {
		name := args[0]
		info, err := e.client.Task(ctx, name)
		if err != nil {
			return err
		}
		if !info.Dynamic {
			return fmt.Errorf("%w: %q is a task registered in code: its definition belongs to the code ('easyjob reschedule %s CRON' overrides its cron)",
				easyjob.ErrNotDynamic, name, name)
		}
		// The options are not in TaskInfo: read them from the row. The
		// read and the write are not one transaction: an update by
		// someone else in between is overwritten by this one.
		cur, err := e.store.Task(ctx, e.group, name)
		if err != nil {
			return fmt.Errorf("update %q: %w", name, err)
		}
		s, err := f.schedule(name, cur)
		if err != nil {
			return err
		}
		t, err := e.client.Update(ctx, s, f.createOptions()...)
		if err != nil {
			return unknownHint(err)
		}
		return e.replySchedule(ctx, "updated", t)
	}
}

// unknownHint names the flag that accepts an unknown handler kind.
func unknownHint(err error) error {
	if errors.Is(err, easyjob.ErrUnknownHandler) {
		return fmt.Errorf("%w (in the CLI: --allow-unknown)", err)
	}
	return err
}

// replySchedule prints the schedule a create or update wrote: JSON, or a
// line and the task table.
func (e *env) replySchedule(ctx context.Context, did string, t easyjob.TaskInfo) error {
	if e.json {
		return e.emit(t)
	}
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	args := "no args"
	if len(t.Args) > 0 {
		args = "args " + compactJSON(t.Args)
	}
	msg := fmt.Sprintf("%s schedule %q (revision %d): handler %s, %s", did, t.Name, t.Revision, t.Handler, args)
	switch {
	case t.Status == repository.TaskDoing:
		msg += fmt.Sprintf("; the fire running on node %d completes with the previous definition", t.NodeID)
	case t.Paused:
		msg += "; paused ('easyjob resume " + t.Name + "' lets it fire)"
	case t.Status == repository.TaskFinished:
		msg += "; its cron has no further fire time"
	default:
		msg += fmt.Sprintf("; next fire %s (%s)", relTime(t.NextStartTime, now), t.NextStartTime.Format(time.RFC3339))
	}
	fmt.Fprintln(e.out, msg)
	printTasks(e.out, []easyjob.TaskInfo{t}, now, e.group)
	return nil
}

// compactJSON is JSON text without insignificant space, for a table cell.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
