package easyjob

import (
	"context"
	"fmt"
	"time"

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
	if _, err := schedule.Parse(cron, t.Options.Timezone); err != nil {
		return nil, fmt.Errorf("easyjob: reschedule %q: %w", name, err)
	}
	if t.ParentID == 0 && emptyCron(cron) {
		return nil, fmt.Errorf("%w: reschedule %q: a root task needs a cron expression", ErrInvalidCron, name)
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return nil, c.wrap("reschedule", name, err)
	}
	return NextFires(cron, t.Options.Timezone, now, n)
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
	var out []time.Time
	for t := after; len(out) < n; {
		next, ok := s.Next(t)
		if !ok {
			break
		}
		out = append(out, next)
		t = next
	}
	return out, nil
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
