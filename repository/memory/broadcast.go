package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// StartBroadcast records one node's start of a fire of a broadcast task,
// as the Postgres store does: nothing when the task is paused, finished,
// removed or at another revision, or when the row exists already.
func (s *Store) StartBroadcast(ctx context.Context, b repository.BroadcastStart) (repository.Execution, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Execution{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[b.Task]
	scheduled := norm(b.ScheduledAt)
	notStarted := func(why string) error {
		return fmt.Errorf("%w: task %d, fire %s, node %d: %s", repository.ErrBroadcastNotStarted,
			b.Task, scheduled.Format(time.RFC3339Nano), b.Node, why)
	}
	switch {
	case t == nil || t.Status == repository.TaskRemoved:
		return repository.Execution{}, notStarted("the task was removed")
	case t.Paused || t.Status == repository.TaskPaused:
		return repository.Execution{}, notStarted("the task is paused")
	case t.Status == repository.TaskFinished:
		return repository.Execution{}, notStarted("the task is finished")
	case t.Revision != b.Revision:
		return repository.Execution{}, notStarted(fmt.Sprintf("the task is at revision %d, not %d", t.Revision, b.Revision))
	}
	for _, id := range s.execsByTask[t.ID] {
		if x := s.execs[id]; x.NodeID == b.Node && x.ScheduledAt.Equal(scheduled) && x.Attempt == 1 && x.Batch == 0 &&
			x.Status != repository.ExecFenced {
			return repository.Execution{}, notStarted("this node recorded the fire already")
		}
	}
	now := s.now()
	s.lastExec++
	x := &repository.Execution{
		ID: s.lastExec, TaskID: t.ID, NodeID: b.Node, ScheduledAt: scheduled, StartedAt: now,
		Status: repository.ExecRunning, Attempt: 1, Kind: repository.RunCron, Revision: t.Revision,
	}
	s.execs[x.ID] = x
	s.execsByTask[t.ID] = append(s.execsByTask[t.ID], x.ID)
	if next := norm(b.Next); next.After(t.NextStartTime) {
		t.NextStartTime = next
	}
	return *x, nil
}

// AbandonBroadcasts closes the running executions of group's broadcast
// tasks whose node is dead or gone, as abandoned.
func (s *Store) AbandonBroadcasts(ctx context.Context, group string, deadAfter time.Duration) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cutoff := now.Add(-deadAfter)
	k := 0
	for _, id := range s.byName[group] {
		t := s.tasks[id]
		if t == nil || !t.Options.Broadcast {
			continue
		}
		for _, xid := range s.execsByTask[id] {
			x := s.execs[xid]
			if x.Status != repository.ExecRunning {
				continue
			}
			if n := s.nodes[x.NodeID]; n != nil && !n.HeartbeatAt.Before(cutoff) {
				continue
			}
			x.Status, x.FinishedAt, x.Error = repository.ExecAbandoned, now, repository.BroadcastAbandoned
			k++
		}
	}
	return k, nil
}
