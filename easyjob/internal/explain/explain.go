// Package explain answers an operator's "why did the fire at this time
// not run, or run late?" from what the store holds: the definition in
// force then (the task's revisions), the operator actions around it (the
// audit log) and the runs recorded for that fire. It reads nothing
// itself: the caller (easyjob.Client.Explain) gathers the facts, so every
// rule here is a pure function with a table test.
package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// Facts are what the store holds about a task and one moment of it.
type Facts struct {
	Now  time.Time       // the store's clock
	Task repository.Task // the task as it is now
	// Revisions are its definitions, newest first (Client.Versions).
	Revisions []repository.Revision
	// Audit are the operator actions on it, newest first.
	Audit []repository.AuditEntry
	// Runs are the runs recorded for the fire asked about, newest first.
	Runs []repository.Execution
	// Names names nodes by id, for the verdict ("" names a node by id).
	Names func(repository.NodeID) string
	// Calendars are the group's exclusion calendars.
	Calendars calendar.Set
	// Covering is the run of an earlier fire that was still running at
	// the fire asked about, when it has no run of its own; nil otherwise.
	Covering *repository.Execution
	// Waiting: no live node has the task's handler now.
	Waiting bool
}

// Answer is the verdict on the fire at a time.
type Answer struct {
	// Fire is the fire asked about: the time given when it is a fire of
	// the definition in force then, else the last fire before it ("no
	// fire" when there is none).
	Fire time.Time
	// Scheduled: the time given is a fire of the definition in force then.
	Scheduled bool
	// Cron is that definition's cron ("" when the task did not exist).
	Cron string
	// Verdict says what happened to the fire, or why nothing did, in one
	// sentence an operator reads.
	Verdict string
	// Window says that the time asked about lies outside the task's
	// window, as the verdict's lead ("" when it does not).
	Window string
}

// At explains the fire at t. Runs in f must be those of the fire At
// returns as Fire: call FireOf first to know it.
func At(f Facts, t time.Time) Answer {
	a := FireOf(f, t)
	if a.Verdict != "" { // no fire to speak of (not created yet, before its window, no cron)
		return a
	}
	a.Verdict = verdict(f, a, t)
	return a
}

// FireOf finds the fire t names: the definition in force at t and, when
// t is not one of its fires, the last fire before t. Verdict is set only
// when there is no fire to look up runs for.
func FireOf(f Facts, t time.Time) Answer {
	cron, opts, existed := definitionAt(f, t)
	if !existed {
		return Answer{Verdict: fmt.Sprintf("the task did not exist yet: it was created at %s", stamp(f.Task.CreatedAt))}
	}
	a := Answer{Cron: cron}
	if cron == "" {
		a.Verdict = "the task has no cron of its own: it runs after each success of its parent"
		return a
	}
	s, err := schedule.Parse(cron, opts.Timezone)
	if err != nil {
		a.Verdict = fmt.Sprintf("its cron %q does not parse: %v", cron, err)
		return a
	}
	s = s.ForTask(f.Task.Name, opts, f.Task.CreatedAt)
	prev, ok := s.Prev(t)
	switch {
	case !opts.Start.IsZero() && t.Before(opts.Start):
		a.Verdict = fmt.Sprintf("%s is before the task's window, which starts at %s", stamp(t), stamp(opts.Start))
	case ok && prev.Equal(t):
		a.Fire, a.Scheduled = t, true
	case ok && !opts.End.IsZero() && t.After(opts.End):
		a.Fire = prev
		a.Window = fmt.Sprintf("%s is after the task's window, which ended at %s; ", stamp(t), stamp(opts.End))
	case ok:
		a.Fire = prev
	default:
		a.Verdict = fmt.Sprintf("no fire of %q falls at or before %s", cron, stamp(t))
	}
	return a
}

// definitionAt is the cron and options in force at t: the newest
// revision written by then; before the first revision, the code's cron
// for a registered task (its code's definition is never recorded), and
// nothing for a schedule created at runtime, which did not exist yet.
func definitionAt(f Facts, t time.Time) (cron string, opts repository.TaskOptions, existed bool) {
	if !f.Task.CreatedAt.IsZero() && t.Before(f.Task.CreatedAt.Truncate(time.Second)) {
		return "", opts, false
	}
	for _, r := range f.Revisions { // newest first
		if !r.ChangedAt.After(t) {
			return r.Cron, r.Options, true
		}
	}
	if n := len(f.Revisions); n > 0 && f.Task.Dynamic {
		first := f.Revisions[n-1]
		if first.Revision == 1 {
			return "", opts, false
		}
		return first.Cron, first.Options, true // revisions before the oldest kept were not recorded
	}
	if f.Task.Dynamic {
		return f.Task.Cron, f.Task.Options, true
	}
	return f.Task.CodeCron, f.Task.Options, true
}

// verdict says what became of fire a.Fire.
func verdict(f Facts, a Answer, t time.Time) string {
	lead := a.Window
	switch {
	case a.Window != "":
		lead += fmt.Sprintf("its last fire was %s: ", stamp(a.Fire))
	case !a.Scheduled:
		lead = fmt.Sprintf("%s is not a fire of %q; its last fire before was %s: ", stamp(t), a.Cron, stamp(a.Fire))
	}
	if len(f.Runs) > 0 {
		return lead + ranVerdict(f, f.Runs)
	}
	if a.Fire.After(f.Now) {
		return lead + "it is still to come"
	}
	if act, ok := pausedAt(f.Audit, a.Fire); ok {
		return lead + fmt.Sprintf("not run: the task was paused then (paused at %s by %s)", stamp(act.At), who(act.Actor))
	}
	if x := f.Covering; x != nil {
		return lead + overlapVerdict(f, *x)
	}
	if f.Waiting {
		return lead + fmt.Sprintf("not run: no live node has the task's handler %q (it waits for one)", f.Task.Handler)
	}
	if !f.Task.StaleSince.IsZero() && !a.Fire.Before(f.Task.StaleSince) {
		return lead + fmt.Sprintf("not run: no live node registered the task then (stale since %s)", stamp(f.Task.StaleSince))
	}
	return lead + "no run recorded for this fire: no node claimed it (no live node had the task then), a misfire policy folded it into a later fire, or its history was pruned"
}

// overlapVerdict says what the task's overlap policy made of a fire
// that came due while run x (of an earlier fire) ran.
func overlapVerdict(f Facts, x repository.Execution) string {
	s := fmt.Sprintf("not run: the run of its fire %s was still running on %s (from %s", stamp(x.ScheduledAt), nodeName(f, x.NodeID), stamp(x.StartedAt))
	if !x.FinishedAt.IsZero() {
		s += " to " + stamp(x.FinishedAt)
	}
	s += "); "
	switch p := f.Task.Options.Overlap; p {
	case repository.OverlapSkip:
		return s + "the overlap policy skip dropped it"
	case repository.OverlapBufferOne, repository.OverlapCancel, repository.OverlapTerminate:
		return s + fmt.Sprintf("the overlap policy %s runs only the first fire due during a run, and dropped this one", p)
	case repository.OverlapBufferAll:
		return s + fmt.Sprintf("the overlap policy buffer_all keeps at most the newest %d fires, and dropped this one", repository.BufferLimit)
	default:
		return s + "the fire waited for it and was then folded into a later one by its misfire policy"
	}
}

// Ahead is what comes for the task as it stands: its next n fires (when
// they start: after the task's jitter, without the fires its calendar
// excludes), or why
// it fires no more on its own (blocked). stale: no live node registers
// it; waiting: no live node has its handler (the fires listed come once
// one has: blocked says so too).
func Ahead(f Facts, stale, waiting bool, n int) (next []time.Time, blocked string) {
	t := f.Task
	switch {
	case t.Status == repository.TaskFinished:
		return nil, "finished: its cron has no further fire (a one-off that ran, or a cron with an end)"
	case t.Status == repository.TaskRemoved:
		return nil, "removed: only its history is kept"
	case t.Paused:
		if act, ok := pausedAt(f.Audit, f.Now); ok {
			return nil, fmt.Sprintf("paused at %s by %s", stamp(act.At), who(act.Actor))
		}
		return nil, "paused"
	case stale:
		return nil, "stale: no live node registers it"
	case waiting:
		blocked = fmt.Sprintf("waiting: no live node has its handler %q; the fires below come once one has", t.Handler)
	case t.Options.ShardOf != "":
		return nil, fmt.Sprintf("shard %d of %d of %q: it runs for each fire of %q", t.Options.Shard, t.Options.Shards, t.Options.ShardOf, t.Options.ShardOf)
	case t.Options.Parents != "":
		return nil, fmt.Sprintf("a DAG step: it runs for each fire that %s completed (%s)", quoteAll(t.Options.Parents.List()), parentPolicy(t.Options.OnParentFailure))
	case t.Cron == "":
		return nil, "a chain step: it runs after each success of its parent"
	}
	// The fires to come, those the task's calendar excludes left out
	// (looking at most maxAhead fires ahead).
	keep := func(at time.Time) bool { ex, _ := f.Calendars.Excludes(t.Options.Calendar, at); return !ex }
	if keep(t.NextStartTime) {
		next = append(next, t.NextStartTime)
	}
	if s, err := schedule.Parse(t.Cron, t.Options.Timezone); err == nil {
		s = s.ForTask(t.Name, t.Options, t.CreatedAt)
		for at, k := t.NextStartTime, 0; len(next) < n && k < maxAhead; k++ {
			nx, ok := s.Next(at)
			if !ok {
				break
			}
			if at = nx; keep(nx) {
				next = append(next, nx)
			}
		}
	}
	if j := t.Options.Jitter; j > 0 {
		for i, at := range next {
			if i > 0 || (t.FireKind == "" && t.Attempt <= 1) { // a manual fire or a retry runs when asked
				next[i] = at.Add(schedule.JitterOf(t.Name, at, j))
			}
		}
	}
	if m := t.Options.MaxFires; m > 0 {
		// Its MaxFires ends it: the fires past the bound do not come.
		left := max(m-t.Fires, 0)
		if int64(len(next)) > left {
			next = next[:left]
			if blocked == "" {
				blocked = fmt.Sprintf("it finishes after %d more fire(s): %d of its MaxFires %d ran", left, t.Fires, m)
			}
		}
	}
	if len(next) == 0 && blocked == "" && t.Options.Calendar != "" {
		blocked = fmt.Sprintf("its calendar %q excludes every fire of the next %d", t.Options.Calendar, maxAhead)
	}
	return next, blocked
}

// maxAhead bounds the fires Ahead looks through for those a calendar
// lets run (an every-second cron over a two-week holiday is 1.2 million).
const maxAhead = 100000

// ranVerdict describes the runs of one fire, newest first.
func ranVerdict(f Facts, runs []repository.Execution) string {
	last := runs[0]
	node := nodeName(f, last.NodeID)
	late := last.StartedAt.Sub(last.ScheduledAt)
	var s string
	switch last.Status {
	case repository.ExecRunning:
		s = fmt.Sprintf("running on %s since %s (started %s after its fire)", node, stamp(last.StartedAt), late)
	case repository.ExecSucceeded, repository.ExecFailed, repository.ExecTimedOut:
		s = fmt.Sprintf("ran on %s, started %s after its fire, %s after %s", node, late, last.Status, last.FinishedAt.Sub(last.StartedAt).Round(time.Millisecond))
		if last.Error != "" {
			s += ": " + last.Error
		}
	case repository.ExecAbandoned:
		s = fmt.Sprintf("started on %s, which died while running it (abandoned at %s)", node, stamp(last.FinishedAt))
	case repository.ExecCancelled:
		s = fmt.Sprintf("ran on %s, started %s after its fire, cancelled after %s", node, late, last.FinishedAt.Sub(last.StartedAt).Round(time.Millisecond))
		if last.Error != "" {
			s += ": " + last.Error
		}
	case repository.ExecFenced:
		s = fmt.Sprintf("ran on %s after its claim was lost (fenced: a peer had taken the task over)", node)
	case repository.ExecSkipped:
		switch {
		case strings.HasPrefix(last.Error, "excluded by calendar"):
			s = "not run: " + last.Error
		case last.Misfire != "":
			s = fmt.Sprintf("not run: found %s late, its misfire policy (%s) skipped it", late, last.Misfire)
		default:
			s = "not run: its parent's run failed, so the chain stopped"
		}
	default:
		s = fmt.Sprintf("recorded %s on %s", last.Status, node)
	}
	if last.Misfire != "" && last.Status != repository.ExecSkipped {
		s += fmt.Sprintf(" (late: its misfire policy %s ran it)", last.Misfire)
	}
	switch last.Kind {
	case "", repository.RunCron:
	case repository.RunBuffered:
		s += fmt.Sprintf(" (a buffered run: it came due while the previous run ran, and the overlap policy %s ran it once that ended)", f.Task.Options.Overlap)
	case repository.RunBackfill:
		s += " (a backfill run, asked for by an operator)"
	default:
		s += fmt.Sprintf(" (a %s run)", last.Kind)
	}
	if n := len(runs); n > 1 {
		s += fmt.Sprintf("; %d attempts in all", countAttempts(runs))
	}
	return s
}

// countAttempts counts the distinct attempts among runs.
func countAttempts(runs []repository.Execution) int {
	var seen []int
	for _, r := range runs {
		if !slices.Contains(seen, r.Attempt) {
			seen = append(seen, r.Attempt)
		}
	}
	return len(seen)
}

// pausedAt finds the pause in force at t: the newest pause or resume
// action before t being a pause.
func pausedAt(audit []repository.AuditEntry, t time.Time) (repository.AuditEntry, bool) {
	for _, e := range audit { // newest first
		if e.At.After(t) {
			continue
		}
		switch e.Action {
		case "pause":
			return e, true
		case "resume":
			return repository.AuditEntry{}, false
		}
	}
	return repository.AuditEntry{}, false
}

func nodeName(f Facts, id repository.NodeID) string {
	if f.Names != nil {
		if n := f.Names(id); n != "" {
			return fmt.Sprintf("%s (node %d)", n, id)
		}
	}
	return fmt.Sprintf("node %d", id)
}

func who(a repository.Actor) string {
	switch {
	case a.Name == "" && a.Via == "":
		return "an unrecorded actor"
	case a.Via == "":
		return a.Name
	default:
		return a.Name + " via " + a.Via
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// quoteAll quotes names and joins them with "and".
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// parentPolicy says when a DAG step's parents complete a fire.
func parentPolicy(p repository.ParentFailure) string {
	if p == repository.ParentFailureRun {
		return "each ended, succeeded or not"
	}
	return "each succeeded, after its retries if it retries"
}
