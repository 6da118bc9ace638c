package memory

import (
	"context"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// GroupSummaries lists the groups q selects with their counts, the runs
// sampled as the Postgres store does (the newest GroupRunSample of each
// span over all groups).
func (s *Store) GroupSummaries(ctx context.Context, q repository.GroupQuery) ([]repository.GroupSummary, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, repository.GroupLimit)
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Clone(q.Names)
	if len(names) == 0 {
		names = s.groupsLocked()
	}
	slices.Sort(names)
	names = slices.Compact(names)
	names = slices.DeleteFunc(names, func(g string) bool { return g <= q.After })
	names = names[:min(len(names), limit)]

	now := s.now()
	byGroup := make(map[string]*repository.GroupSummary, len(names))
	out := make([]repository.GroupSummary, len(names))
	for i, g := range names {
		out[i].Group = g
		byGroup[g] = &out[i]
		for _, t := range s.visibleLocked(g) {
			out[i].Tasks++
			if t.Status == repository.TaskDoing {
				out[i].Running++
			}
			if t.Status == repository.TaskPaused || t.Paused {
				out[i].Paused++
			}
			if failing(t) {
				out[i].Failing++
			}
		}
	}
	cutoff := now.Add(-q.LiveWithin)
	for _, n := range s.nodes {
		if g := byGroup[n.Group]; g != nil {
			g.Nodes++
			if !n.Leaving && !n.HeartbeatAt.Before(cutoff) {
				g.LiveNodes++
			}
		}
	}
	fires, firesCapped := s.sampleLocked(q.FiresWithin, func(*repository.Execution) bool { return true })
	for _, x := range fires {
		if g := byGroup[s.tasks[x.TaskID].Group]; g != nil {
			g.Fires++
		}
	}
	fails, failsCapped := s.sampleLocked(q.FailuresWithin, func(x *repository.Execution) bool {
		return slices.Contains(repository.FailureStatuses, x.Status)
	})
	for _, x := range fails {
		if g := byGroup[s.tasks[x.TaskID].Group]; g != nil {
			g.Failures++
			if x.StartedAt.After(g.LastFailure) {
				g.LastFailure = x.StartedAt
			}
		}
	}
	for i := range out {
		out[i].FiresCapped, out[i].FailuresCapped = firesCapped, failsCapped
	}
	return out, nil
}

// groupsLocked lists the groups with tasks (not removed) or nodes,
// unsorted, possibly repeated.
func (s *Store) groupsLocked() []string {
	var out []string
	for g, names := range s.byName {
		for _, id := range names {
			if s.tasks[id].Status != repository.TaskRemoved {
				out = append(out, g)
				break
			}
		}
	}
	for _, n := range s.nodes {
		out = append(out, n.Group)
	}
	return out
}

// sampleLocked returns the newest GroupRunSample executions of every
// group started within the span back from now that keep selects, and
// whether the bound was reached; none for a span <= 0.
func (s *Store) sampleLocked(within time.Duration, keep func(*repository.Execution) bool) ([]*repository.Execution, bool) {
	if within <= 0 {
		return nil, false
	}
	since := s.now().Add(-within)
	var xs []*repository.Execution
	for _, x := range s.execs {
		if !x.StartedAt.Before(since) && keep(x) && s.tasks[x.TaskID] != nil {
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b *repository.Execution) int { return b.StartedAt.Compare(a.StartedAt) })
	if len(xs) >= repository.GroupRunSample {
		return xs[:repository.GroupRunSample], true
	}
	return xs, false
}
