package easyjob

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/calendar"
	"github.com/easyjob-go/easyjob/easyjob/internal/explain"
	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/repository"
)

// PreviewReschedule checks cron for the task as Reschedule does (in the
// task's time zone; only a child may have none) and returns the first n
// fires it would have after the store's now, without changing anything.
// An invalid expression gives an error wrapping ErrInvalidCron, an
// unknown task one wrapping ErrTaskNotFound.
func (c *Client) PreviewReschedule(ctx context.Context, name, cron string, n int) ([]time.Time, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	sched, err := schedule.Parse(cron, t.Options.Timezone)
	if err != nil {
		return nil, fmt.Errorf("easyjob: reschedule %q: %w", name, err)
	}
	if t.ParentID == 0 && emptyCron(cron) {
		return nil, fmt.Errorf("%w: reschedule %q: a root task needs a cron expression", ErrInvalidCron, name)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	return sched.ForTask(t.Options, t.CreatedAt).Fires(now, n), nil
}

// emptyCron reports an expression without fields of its own.
func emptyCron(cron string) bool {
	s, err := schedule.Parse(cron, "")
	return err == nil && s.Empty()
}

// NextFires returns the first n fire times of cron in time zone tz ("" is
// UTC, a CRON_TZ= prefix wins) strictly after t, fewer when the
// expression runs out, none for an empty expression. An invalid one gives
// an error wrapping ErrInvalidCron.
func NextFires(cron, tz string, after time.Time, n int) ([]time.Time, error) {
	s, err := schedule.Parse(cron, tz)
	if err != nil {
		return nil, err
	}
	return s.Fires(after, n), nil
}

// ExecutionInfos converts history rows read from the store (Client.Control)
// as History does.
func ExecutionInfos(xs []repository.Execution) []ExecutionInfo {
	out := make([]ExecutionInfo, len(xs))
	for i, x := range xs {
		out[i] = ExecutionInfo{
			ID: x.ID, Task: x.TaskName, TaskID: int64(x.TaskID), ParentExecutionID: x.ParentExecutionID,
			NodeID: int64(x.NodeID), ScheduledAt: x.ScheduledAt, StartedAt: x.StartedAt, FinishedAt: x.FinishedAt,
			Status: x.Status, Error: x.Error, Attempt: x.Attempt, Misfire: string(x.Misfire), Kind: x.Kind,
			Args: rawArgs(x.Args), Revision: x.Revision,
		}
	}
	return out
}

// Explanation says, from what the store holds, what comes for a task and
// what became of one of its fires (Client.Explain).
type Explanation struct {
	Task TaskInfo  `json:"task"`
	Now  time.Time `json:"now"` // the store's clock
	// Next are the task's next fires (its next start, then its cron's),
	// none when it fires no more on its own: Blocked says why (paused,
	// stale, finished, a chain step). A schedule waiting for a node with
	// its handler has both: the fires come once one runs.
	Next    []time.Time `json:"next,omitempty"`
	Blocked string      `json:"blocked,omitempty"`
	// Fire is the verdict on the time asked about, nil when none was.
	Fire *FireVerdict `json:"fire,omitempty"`
}

// FireVerdict is what became of the fire at a time: its runs, or why it
// had none.
type FireVerdict struct {
	At time.Time `json:"at"` // the time asked about
	// Fire is At when it is a fire of the definition in force then
	// (Scheduled), else the last fire before it; zero when there is none.
	Fire      time.Time `json:"fire,omitzero"`
	Scheduled bool      `json:"scheduled"`
	// Cron is the definition's cron then ("" when the task did not exist).
	Cron string `json:"cron,omitempty"`
	// Runs are the runs recorded for Fire, newest first.
	Runs    []ExecutionInfo `json:"runs"`
	Verdict string          `json:"verdict"`
}

// explainFires is how many fires ahead Explain lists.
const explainFires = 10

// Explain answers "when will the task run next, and why did (or didn't)
// the fire at time at run?" from the task row, its versions, the audit
// log and the runs recorded for that fire; a zero at asks only the
// former. Finding a fire's runs walks the task's history newest first, so
// its cost follows the runs since then.
func (c *Client) Explain(ctx context.Context, name string, at time.Time) (Explanation, error) {
	t, err := c.store.Task(ctx, c.group, name)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	info, err := c.info(ctx, t)
	if err != nil {
		return Explanation{}, err
	}
	one := []TaskInfo{info}
	if err := c.markStale(ctx, one); err != nil { // Stale and Waiting judged
		return Explanation{}, c.wrap("explain", name, err)
	}
	info = one[0]
	now, err := c.store.Now(ctx)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	revs, err := c.store.Revisions(ctx, c.group, name)
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	audit, err := c.store.Audit(ctx, c.group, repository.AuditFilter{Task: name, Limit: 1000})
	if err != nil {
		return Explanation{}, c.wrap("explain", name, err)
	}
	f := explain.Facts{Now: now, Task: t, Revisions: revs, Audit: audit}
	if t.Options.Calendar != "" {
		cs, err := c.store.Calendars(ctx, c.group)
		if err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		f.Calendars, _ = calendar.NewSet(cs)
	}
	out := Explanation{Task: info, Now: now}
	out.Next, out.Blocked = explain.Ahead(f, info.Stale, info.Waiting, explainFires)
	if at.IsZero() {
		return out, nil
	}
	fire := explain.FireOf(f, at)
	if !fire.Fire.IsZero() {
		if f.Runs, err = c.store.History(ctx, c.group, name, repository.HistoryFilter{Fire: fire.Fire, Limit: 100}); err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		nodes, err := c.store.Nodes(ctx, c.group)
		if err != nil {
			return Explanation{}, c.wrap("explain", name, err)
		}
		f.Names = func(id repository.NodeID) string {
			for _, n := range nodes {
				if n.ID == id {
					return n.Name
				}
			}
			return ""
		}
	}
	a := explain.At(f, at)
	out.Fire = &FireVerdict{At: at, Fire: a.Fire, Scheduled: a.Scheduled, Cron: a.Cron, Runs: ExecutionInfos(f.Runs), Verdict: a.Verdict}
	return out, nil
}
