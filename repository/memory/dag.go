package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// dagState is what the Postgres columns dag_fire and dag_inputs of a DAG
// step's row and result of an execution hold.
type dagState struct {
	fire    map[repository.TaskID]time.Time
	inputs  map[repository.TaskID]map[string]int64
	results map[int64]string
}

// AdvanceStep makes a waiting DAG step due for the earliest fire its
// parents completed since its last, as the Postgres store does.
func (s *Store) AdvanceStep(ctx context.Context, a repository.StepAdvance) (time.Time, error) {
	if err := s.begin(ctx); err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(a.Group, a.Step)
	if err != nil {
		return time.Time{}, fmt.Errorf("easyjob/memory: advance DAG step %q: %w", a.Step, err)
	}
	paused := t.Paused || t.Status == repository.TaskPaused
	if (t.Status != repository.TaskPending && t.Status != repository.TaskPaused) || !t.NextStartTime.Equal(repository.AwaitingParents) {
		return time.Time{}, nil
	}
	last, ok := s.dag.fire[t.ID]
	if !ok {
		last = t.CreatedAt
	}
	runs := map[string][]repository.StepRun{}
	for _, p := range a.Parents {
		pt, err := s.taskLocked(a.Group, p.Name)
		if err != nil {
			continue
		}
		ids := s.execsByTask[pt.ID]
		if len(ids) > stepRunsWindow {
			ids = ids[len(ids)-stepRunsWindow:]
		}
		for _, id := range ids {
			x := s.execs[id]
			if x.ID <= s.dag.inputs[t.ID][p.Name] || x.Batch != 0 || x.Status == repository.ExecFenced {
				continue
			}
			runs[p.Name] = append(runs[p.Name], repository.StepRun{ID: x.ID, ScheduledAt: x.ScheduledAt, Attempt: x.Attempt, Status: x.Status})
		}
	}
	pick := repository.PickStepFire
	if paused {
		pick = repository.LastStepFire // the fires completed while paused are passed
	}
	fire, in, ok := pick(a, last, runs)
	if !ok {
		return time.Time{}, nil
	}
	if s.dag.fire == nil {
		s.dag.fire, s.dag.inputs = map[repository.TaskID]time.Time{}, map[repository.TaskID]map[string]int64{}
	}
	s.dag.fire[t.ID], s.dag.inputs[t.ID] = fire, in
	if paused {
		return time.Time{}, nil
	}
	t.NextStartTime, t.FireKind, t.Attempt, t.TriggerRequested = fire, repository.RunChain, 1, false
	t.Version++
	t.UpdatedAt = s.now()
	s.notifyLocked(a.Group)
	return fire, nil
}

// stepRunsWindow bounds the runs of each parent AdvanceStep weighs.
const stepRunsWindow = 200

// keepResultLocked stores the result of run id (Finish.Result).
func (s *Store) keepResultLocked(id int64, result string) {
	if result == "" {
		return
	}
	if s.dag.results == nil {
		s.dag.results = map[int64]string{}
	}
	s.dag.results[id] = result
}

// ParentResults returns the results of the parent runs the step's current
// fire follows.
func (s *Store) ParentResults(ctx context.Context, step repository.TaskID) (map[string]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for name, id := range s.dag.inputs[step] {
		out[name] = s.dag.results[id]
	}
	return out, nil
}
