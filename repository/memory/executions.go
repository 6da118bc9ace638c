package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// defaultHistoryLimit is the page size of History when the filter gives none.
const defaultHistoryLimit = 100

// StartExecution inserts a running execution if c's fence holds.
func (s *Store) StartExecution(ctx context.Context, c repository.Claim, e repository.Execution) (repository.Execution, error) {
	if err := s.begin(ctx); err != nil {
		return repository.Execution{}, err
	}
	if err := repository.CheckArgs(fmt.Sprintf("start execution of task %d", c.ID), e.Args); err != nil {
		return repository.Execution{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked(c, e, s.now())
}

// startLocked inserts one running execution at now if c's fence holds.
func (s *Store) startLocked(c repository.Claim, e repository.Execution, now time.Time) (repository.Execution, error) {
	if s.fenced(c) == nil {
		return repository.Execution{}, fmt.Errorf("easyjob: start execution of task %d at version %d by node %d: %w",
			c.ID, c.Version, c.NodeID, repository.ErrClaimLost)
	}
	// The start key (task, node, fire, attempt, batch) is unique among the
	// rows that are not fenced: a retried start finds its row, as in
	// Postgres.
	for _, id := range s.execsByTask[c.ID] {
		if x := s.execs[id]; x.Status != repository.ExecFenced && x.NodeID == c.NodeID &&
			x.ScheduledAt.Equal(norm(e.ScheduledAt)) && x.Attempt == max(e.Attempt, 1) && x.Batch == e.Batch {
			if x.Status == repository.ExecRunning || x.Status == repository.ExecAbandoned {
				x.Status, x.FinishedAt, x.Error = repository.ExecRunning, time.Time{}, ""
			}
			return *x, nil
		}
	}
	s.lastExec++
	x := &repository.Execution{
		ID:                s.lastExec,
		TaskID:            c.ID,
		ParentExecutionID: e.ParentExecutionID,
		NodeID:            c.NodeID,
		ScheduledAt:       norm(e.ScheduledAt),
		StartedAt:         now,
		Status:            repository.ExecRunning,
		Attempt:           max(e.Attempt, 1),
		Misfire:           e.Misfire,
		Kind:              e.Kind,
		Args:              e.Args,
		Revision:          e.Revision,
		Batch:             e.Batch,
	}
	s.execs[x.ID] = x
	s.execsByTask[c.ID] = append(s.execsByTask[c.ID], x.ID)
	return *x, nil
}

// appendLocked returns the execution row of f's run (Finish.Run): the one
// at its start key when there is one (a retried finish, a row recovery
// wrote), else a new row, running until the caller closes it. A row found
// that is still open and lacks the run's arguments or revision (recovery
// wrote it) takes them.
func (s *Store) appendLocked(f repository.Finish, status repository.ExecStatus, now time.Time) *repository.Execution {
	r := f.Run
	args := repository.RecordedArgs(r.Args)
	for _, id := range s.execsByTask[f.Claim.ID] {
		if x := s.execs[id]; sameRunRow(x, f, status) && x.NodeID == f.Claim.NodeID &&
			x.ScheduledAt.Equal(norm(r.ScheduledAt)) && x.Attempt == max(r.Attempt, 1) && x.Batch == r.Batch {
			if x.Status == repository.ExecRunning || x.Status == repository.ExecAbandoned {
				if x.Args == "" {
					x.Args = args
				}
				if x.Revision == 0 {
					x.Revision = r.Revision
				}
			}
			return x
		}
	}
	s.lastExec++
	x := &repository.Execution{
		ID: s.lastExec, TaskID: f.Claim.ID, ParentExecutionID: r.ParentExecutionID, NodeID: f.Claim.NodeID,
		ScheduledAt: norm(r.ScheduledAt), StartedAt: now.Add(-f.Ran), Status: repository.ExecRunning,
		Attempt: max(r.Attempt, 1), Misfire: r.Misfire, Kind: r.Kind, Args: args, Revision: r.Revision, Batch: r.Batch,
	}
	s.execs[x.ID] = x
	s.execsByTask[f.Claim.ID] = append(s.execsByTask[f.Claim.ID], x.ID)
	return x
}

// sameRunRow reports whether row x, at the start key of finish f's run,
// is that run's (appendLocked): for a held finish any row but a fenced
// one (its start record, or the row of a retried finish); for a fenced
// finish an open row (its start record), a fenced one, or a closed one
// that started when f's run did (a retry). A row this node closed under
// a later claim of the same fire, started at another time, is another
// run, and the fenced one is recorded beside it.
func sameRunRow(x *repository.Execution, f repository.Finish, status repository.ExecStatus) bool {
	if status != repository.ExecFenced {
		return x.Status != repository.ExecFenced
	}
	switch x.Status {
	case repository.ExecRunning, repository.ExecAbandoned, repository.ExecFenced:
		return true
	}
	return f.Started.IsZero() || x.StartedAt.Equal(norm(f.Started))
}

// Finish applies fs as one batch, each entry with its own fence.
func (s *Store) Finish(ctx context.Context, fs []repository.Finish) ([]repository.FinishResult, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := make([]repository.FinishResult, len(fs))
	handedOff := map[string]bool{}
	for i, f := range fs {
		t := s.fenced(f.Claim)
		if t != nil {
			wasPaused := t.Paused
			finishTask(t, f, now)
			if t.Paused && !wasPaused { // paused by its failures (finishTask)
				s.appendAuditLocked(repository.AuditEntry{
					Group: t.Group, Task: t.Name, Actor: repository.Actor{Name: fmt.Sprintf("node %d", f.Claim.NodeID), Via: "node"},
					Action: "pause", Detail: fmt.Sprintf("after %d failed runs in a row (the last: %s)", t.Failures, t.LastError),
				}, now)
			}
			delete(s.heldFire, t.ID)
			out[i].Task = *t
			if f.Handoff && t.Status == repository.TaskPending {
				handedOff[t.Group] = true
			}
		} else {
			out[i].Err = fmt.Errorf("easyjob: finish of task %d at version %d by node %d: %w",
				f.Claim.ID, f.Claim.Version, f.Claim.NodeID, repository.ErrClaimLost)
		}
		if f.Withdraw { // a fire given back before its job began: no run
			s.withdrawLocked(f.ExecutionID, t != nil)
			continue
		}
		status := f.Status
		if t == nil {
			status = repository.ExecFenced
		}
		if f.Status == "" { // a run that goes on without its claim: EndRun ends it
			if f.ExecutionID == 0 && f.Run != nil && t != nil {
				s.appendLocked(f, repository.ExecRunning, now)
			}
			continue
		}
		x := s.execs[f.ExecutionID]
		if f.ExecutionID == 0 && f.Run != nil {
			x = s.appendLocked(f, status, now)
		}
		if x != nil && (x.Status == repository.ExecRunning || x.Status == repository.ExecAbandoned) {
			x.Status, x.FinishedAt, x.Error = status, now, f.Error
			s.setLogLocked(x.ID, f.Log)
			s.keepResultLocked(x.ID, f.Result)
			if !f.Started.IsZero() { // measured where the job ran (Finish.Started)
				x.StartedAt = minTime(norm(f.Started), now)
				x.FinishedAt = minTime(norm(f.Started.Add(f.Ran)), now)
			}
		}
	}
	for g := range handedOff {
		s.notifyLocked(g)
	}
	return out, nil
}

// withdrawLocked deletes the open start record id of a fire given back
// before its job began (Finish.Withdraw). A fenced withdrawal (held
// false) deletes only a record recovery marked abandoned: a running one
// was reopened since by a run of the same fire and is that run's.
func (s *Store) withdrawLocked(id int64, held bool) {
	x := s.execs[id]
	if x == nil || (x.Status != repository.ExecAbandoned && (!held || x.Status != repository.ExecRunning)) {
		return
	}
	delete(s.execs, id)
	delete(s.logs, id)
	s.execsByTask[x.TaskID] = slices.DeleteFunc(s.execsByTask[x.TaskID], func(xid int64) bool { return xid == id })
}

// finishTask writes one held finish to its row, in the contract's priority.
// Like the Postgres store, a zero f.Next keeps the row's next_start_time and
// an attempt below 1 is written as 1. A manual fire's arguments (FireArgs)
// outlive the finish only for the extra fire a trigger asked for while it
// ran.
func finishTask(t *repository.Task, f repository.Finish, now time.Time) {
	next, attempt := norm(f.Next), max(f.NextAttempt, 1)
	if next.IsZero() {
		next = t.NextStartTime
	}
	if f.Done || !t.TriggerRequested {
		t.FireArgs = ""
	}
	t.Version++
	if f.Status != "" { // "": the run goes on (EndRun)
		t.LastStatus, t.LastError, t.LastFinishedAt = f.Status, f.Error, now
	}
	switch f.Status {
	case repository.ExecFailed, repository.ExecTimedOut:
		t.Failures++
	case repository.ExecSucceeded:
		t.Failures = 0
	}
	// A run whose failure reaches the task's PauseAfter parks it paused
	// (a trigger's extra fire or the end of the cron first).
	if f.Pause && !f.Done && !t.TriggerRequested {
		t.Paused = true
	}
	t.UpdatedAt = now
	if f.CountFire {
		t.Fires++
	}
	backfillAsked := !t.BackfillNext.IsZero() && !f.Backfilled
	switch {
	case f.Done:
		t.BackfillNext, t.BackfillTo, t.BackfillAt = time.Time{}, time.Time{}, time.Time{}
	case f.Backfilled:
		t.BackfillNext = norm(f.BackfillNext)
		if t.BackfillNext.IsZero() {
			t.BackfillTo, t.BackfillAt = time.Time{}, time.Time{}
		}
	}
	if !f.Done {
		t.FireKind = "" // the fire it schedules is the cron's or a retry (or manual, buffered, backfill: below)
	}
	release := func(st repository.TaskStatus) { t.Status, t.NodeID = st, 0 }
	switch {
	case f.Done:
		release(repository.TaskFinished)
	case t.TriggerRequested:
		release(repository.TaskPending)
		t.NextStartTime, t.Attempt, t.TriggerRequested, t.FireKind = now, 1, false, repository.RunManual
	case t.Cron != f.Cron || t.Revision != f.Revision: // rescheduled or edited while the fire ran: the row's next wins
		t.Attempt = 1
		if t.Paused {
			release(repository.TaskPaused)
		} else {
			release(repository.TaskPending)
		}
	case t.Paused:
		release(repository.TaskPaused)
		t.NextStartTime, t.Attempt = next, attempt
	case f.Keep && !backfillAsked:
		t.NextStartTime, t.Attempt, t.FireKind = next, attempt, f.NextKind
	default:
		release(repository.TaskPending)
		t.NextStartTime, t.Attempt, t.FireKind = next, attempt, f.NextKind
	}
}

// History lists executions of a task, newest first.
func (s *Store) History(ctx context.Context, group, name string, f repository.HistoryFilter) ([]repository.Execution, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.anyTaskLocked(group, name) // a removed task's history too
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	since, fire := norm(f.Since), norm(f.Fire)
	ids := s.execsByTask[t.ID]
	var out []repository.Execution
	for i := len(ids) - 1; i >= 0 && len(out) < limit; i-- {
		x := s.execs[ids[i]]
		switch {
		case f.BeforeID != 0 && x.ID >= f.BeforeID,
			f.Status != "" && x.Status != f.Status,
			!since.IsZero() && x.StartedAt.Before(since),
			!fire.IsZero() && !x.ScheduledAt.Equal(fire):
			continue
		}
		e := *x
		e.TaskName = t.Name
		out = append(out, e)
	}
	return out, nil
}

// PruneHistory deletes the non-running executions of group's tasks that
// started before now - maxAge (maxAge > 0) or are not among the newest
// maxRows executions of their task (maxRows > 0).
func (s *Store) PruneHistory(ctx context.Context, group string, maxAge time.Duration, maxRows int) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	if maxAge <= 0 && maxRows <= 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := s.now().Add(-maxAge)
	deleted := 0
	for _, id := range s.byName[group] {
		ids := s.execsByTask[id]
		kept := ids[:0]
		for i, xid := range ids {
			x := s.execs[xid]
			rank := len(ids) - i // 1 = newest
			old := maxAge > 0 && x.StartedAt.Before(cutoff)
			surplus := maxRows > 0 && rank > maxRows
			if x.Status != repository.ExecRunning && (old || surplus) {
				delete(s.execs, xid)
				delete(s.logs, xid)
				deleted++
				continue
			}
			kept = append(kept, xid)
		}
		if len(kept) == 0 {
			delete(s.execsByTask, id)
		} else {
			s.execsByTask[id] = kept
		}
	}
	// Removed tasks were kept only for their history.
	for name, id := range s.byName[group] {
		if s.tasks[id].Status == repository.TaskRemoved && len(s.execsByTask[id]) == 0 {
			s.deleteTaskLocked(group, name, id)
		}
	}
	return deleted, nil
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
