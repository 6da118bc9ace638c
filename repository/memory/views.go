package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// TaskCounts counts the tasks of group by status, pause, claimer, failing
// and stale.
func (s *Store) TaskCounts(ctx context.Context, group string, liveWithin time.Duration) ([]repository.TaskCount, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stale := s.staleLocked(group, liveWithin)
	counts := map[repository.TaskCount]int{}
	for _, t := range s.visibleLocked(group) {
		k := repository.TaskCount{Status: t.Status, Paused: t.Paused, Failing: failing(t), Stale: stale(t)}
		if t.Status == repository.TaskDoing {
			k.NodeID = t.NodeID
		}
		counts[k]++
	}
	out := make([]repository.TaskCount, 0, len(counts))
	for k, n := range counts {
		k.Count = n
		out = append(out, k)
	}
	return out, nil
}

// TaskPage lists one page of the matching tasks of group by name.
func (s *Store) TaskPage(ctx context.Context, group string, q repository.TaskQuery) (repository.TaskPage, error) {
	if err := s.begin(ctx); err != nil {
		return repository.TaskPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stale := s.staleLocked(group, q.LiveWithin)
	search := strings.ToLower(q.Search)
	var rows []repository.TaskRow
	for _, t := range s.visibleLocked(group) {
		switch {
		case search != "" && !strings.Contains(strings.ToLower(t.Name), search),
			q.Status != "" && t.Status != q.Status,
			q.Paused && !t.Paused,
			q.Failing && !failing(t),
			q.Stale && !stale(t):
			continue
		}
		rows = append(rows, s.rowLocked(t, stale))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	limit := q.Limit
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	page := repository.TaskPage{Total: min(len(rows), repository.TaskCountLimit), TotalCapped: len(rows) > repository.TaskCountLimit}
	// from, to: the page's bounds among the sorted matches.
	var from, to int
	switch {
	case q.After != "":
		from = sort.Search(len(rows), func(i int) bool { return rows[i].Name > q.After })
		to = min(from+limit, len(rows))
	case q.Before != "":
		to = sort.Search(len(rows), func(i int) bool { return rows[i].Name >= q.Before })
		from = max(to-limit, 0)
	default:
		to = min(limit, len(rows))
	}
	page.Rows = rows[from:to]
	page.HasPrev, page.HasNext = from > 0, to < len(rows)
	return page, nil
}

// TaskTree lists the root of name's chain and all its descendants, by id.
func (s *Store) TaskTree(ctx context.Context, group, name string, liveWithin time.Duration) ([]repository.TaskRow, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(group, name)
	if err != nil {
		return nil, err
	}
	if t.Status == repository.TaskRemoved {
		return nil, fmt.Errorf("easyjob: task %q of group %q: %w", name, group, repository.ErrTaskNotFound)
	}
	for t.ParentID != 0 && s.tasks[t.ParentID] != nil {
		t = s.tasks[t.ParentID]
	}
	stale := s.staleLocked(group, liveWithin)
	in := map[repository.TaskID]bool{t.ID: true}
	rows := []repository.TaskRow{s.rowLocked(t, stale)}
	for grew := true; grew; { // descendants, to a fixed point
		grew = false
		for _, c := range s.visibleLocked(group) {
			if !in[c.ID] && in[c.ParentID] {
				in[c.ID], grew = true, true
				rows = append(rows, s.rowLocked(c, stale))
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows, nil
}

// TaskRuns is History of the task with that id.
func (s *Store) TaskRuns(ctx context.Context, group string, task repository.TaskID, f repository.HistoryFilter) ([]repository.Execution, error) {
	s.mu.Lock()
	t := s.tasks[task]
	var name string
	if t != nil && t.Group == group {
		name = t.Name
	}
	s.mu.Unlock()
	if name == "" {
		return nil, s.begin(ctx)
	}
	return s.History(ctx, group, name, f) // counts the call
}

// RecentExecutions lists the executions of group started at or after
// since, newest first.
func (s *Store) RecentExecutions(ctx context.Context, group string, since time.Time, limit int) ([]repository.Execution, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.execsSinceLocked(group, norm(since), func(*repository.Execution) bool { return true })
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out[:min(limit, len(out))], nil
}

// CountFailures counts the failed, timed out, abandoned and fenced
// executions of group started at or after since.
func (s *Store) CountFailures(ctx context.Context, group string, since time.Time) (map[repository.ExecStatus]int, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[repository.ExecStatus]int{}
	for _, x := range s.execsSinceLocked(group, norm(since), func(x *repository.Execution) bool {
		return slices.Contains(repository.FailureStatuses, x.Status)
	}) {
		out[x.Status]++
	}
	return out, nil
}

// execsSinceLocked copies the executions of group's tasks started at or
// after since that keep selects, with TaskName filled.
func (s *Store) execsSinceLocked(group string, since time.Time, keep func(*repository.Execution) bool) []repository.Execution {
	var out []repository.Execution
	for _, tid := range s.byName[group] {
		ids := s.execsByTask[tid]
		for i := len(ids) - 1; i >= 0; i-- {
			x := s.execs[ids[i]]
			if x.StartedAt.Before(since) || !keep(x) {
				continue
			}
			e := *x
			e.TaskName = s.tasks[tid].Name
			out = append(out, e)
		}
	}
	return out
}

// visibleLocked lists the tasks of group that are not removed.
func (s *Store) visibleLocked(group string) []*repository.Task {
	var out []*repository.Task
	for _, id := range s.byName[group] {
		if t := s.tasks[id]; t.Status != repository.TaskRemoved {
			out = append(out, t)
		}
	}
	return out
}

// rowLocked is t as a TaskRow.
func (s *Store) rowLocked(t *repository.Task, stale func(*repository.Task) bool) repository.TaskRow {
	r := repository.TaskRow{Task: *t, Stale: stale(t)}
	if p := s.tasks[t.ParentID]; t.ParentID != 0 && p != nil {
		r.Parent = p.Name
	}
	return r
}

// staleLocked returns whether a task is stale in group: no node live
// within liveWithin registers it. A runtime schedule (Dynamic) never is.
func (s *Store) staleLocked(group string, liveWithin time.Duration) func(t *repository.Task) bool {
	cutoff := s.now().Add(-liveWithin)
	registered := map[string]bool{}
	for _, n := range s.nodesLocked(group, func(n *repository.Node) bool { return !n.HeartbeatAt.Before(cutoff) && !n.Leaving }) {
		names, ok := s.taskSets[n.TaskSet]
		if n.TaskSet == "" || !ok {
			return func(*repository.Task) bool { return false } // it registers everything
		}
		for _, name := range names {
			registered[name] = true
		}
	}
	return func(t *repository.Task) bool { return !t.Dynamic && !registered[t.Name] }
}

// failing reports a task whose last run failed or timed out.
func failing(t *repository.Task) bool {
	return t.LastStatus == repository.ExecFailed || t.LastStatus == repository.ExecTimedOut
}
