package repository

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// AwaitingParents is the next_start_time of a DAG step that waits for its
// parents (TaskOptions.Parents): far beyond any loader's window, so no
// node claims the row until the last parent's success makes it due
// (DagStore.AdvanceStep).
var AwaitingParents = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// ParentFailure is what a DAG step does when a parent's run of a fire did
// not succeed (TaskOptions.OnParentFailure).
type ParentFailure string

// Parent-failure policies.
const (
	// ParentFailureSkip (the default) does not run the step for that fire:
	// its subtree is skipped. A parent's retry that succeeds still makes
	// it due (it waits for the retry).
	ParentFailureSkip ParentFailure = ""
	// ParentFailureRun runs the step once every parent's run of the fire
	// ended, succeeded or not (its last attempt, when it retries).
	ParentFailureRun ParentFailure = "run"
)

// StepParent is one parent of a DAG step as DagStore.AdvanceStep weighs
// it: its name and how many attempts a fire of it gets (1 + MaxRetries),
// so that a failed last attempt ends the parent's part of the fire.
type StepParent struct {
	Name     string
	Attempts int
}

// StepAdvance asks DagStore.AdvanceStep to make DAG step Step of Group due
// for the earliest fire its parents completed and it has not run yet.
type StepAdvance struct {
	Group   string
	Step    string
	Parents []StepParent
	Policy  ParentFailure
}

// DagStore makes DAG steps due and passes results from parent runs to
// child runs (a run's result is written by its finish: Finish.Result). There is no coordinator: whichever node finishes a parent's
// run (or sweeps) asks, and the step's row lock orders the askers.
type DagStore interface {
	// AdvanceStep makes step s due when it waits (next_start_time is
	// AwaitingParents, not claimed) and every parent has a run of one
	// fire, later than the step's last fire, that counts under s.Policy.
	// A run's fire is its scheduled time for a first attempt, and that of
	// the first attempt before it for a retry, so a parent's successful
	// retry completes its fire. The earliest such fire wins; the step's
	// row moves to it (due now, kind chain, the parent runs it follows
	// remembered for ParentResults) and the fires before it are passed.
	// A paused step passes the fires completed while it is paused (its
	// last fire moves to the latest; none runs on resume). It reports
	// the fire made due (zero when none).
	AdvanceStep(ctx context.Context, s StepAdvance) (time.Time, error)
	// ParentResults returns the results of the parent runs the step's
	// current fire follows, by parent name ("" for a parent run without
	// a result).
	ParentResults(ctx context.Context, step TaskID) (map[string]string, error)
}

// MaxResultBytes bounds a run's result (easyjob.SetResult).
const MaxResultBytes = 64 << 10

// StepRun is one run of a DAG step's parent as AdvanceStep weighs it.
type StepRun struct {
	ID          int64
	ScheduledAt time.Time
	Attempt     int
	Status      ExecStatus
}

// PickStepFire is AdvanceStep's choice, shared by the stores: given each
// parent's runs (ascending ids; fenced runs and other batches left out)
// and the step's last fire, it returns the earliest later fire that every
// parent completed under policy, with the parent run each counts for it.
func PickStepFire(s StepAdvance, last time.Time, runs map[string][]StepRun) (time.Time, map[string]int64, bool) {
	fires, done := completeFires(s, last, runs)
	if len(fires) == 0 {
		return time.Time{}, nil, false
	}
	return fires[0], inputsOf(s, done, fires[0]), true
}

// LastStepFire is the latest fire PickStepFire could choose: what a
// paused step passes (the fires its parents complete while it is paused
// do not run on resume).
func LastStepFire(s StepAdvance, last time.Time, runs map[string][]StepRun) (time.Time, map[string]int64, bool) {
	fires, done := completeFires(s, last, runs)
	if len(fires) == 0 {
		return time.Time{}, nil, false
	}
	f := fires[len(fires)-1]
	return f, inputsOf(s, done, f), true
}

// completeFires returns the fires after last that every parent completed
// under s.Policy, ascending, and for each parent the run that completes
// each of its fires.
func completeFires(s StepAdvance, last time.Time, runs map[string][]StepRun) ([]time.Time, map[string]map[time.Time]int64) {
	if len(s.Parents) == 0 {
		return nil, nil
	}
	done := make(map[string]map[time.Time]int64, len(s.Parents))
	for _, p := range s.Parents {
		m := map[time.Time]int64{}
		var fire time.Time // the fire of the attempt series going on
		for _, r := range runs[p.Name] {
			if r.Attempt <= 1 {
				fire = r.ScheduledAt.UTC()
			}
			if fire.IsZero() || !fire.After(last) {
				continue // a passed fire, or a retry whose first attempt is not in view
			}
			if _, ok := m[fire]; ok && s.Policy == ParentFailureSkip {
				continue
			}
			if counts(r, p.Attempts, s.Policy) {
				m[fire] = r.ID
			}
		}
		done[p.Name] = m
	}
	var fires []time.Time
	for f := range done[s.Parents[0].Name] {
		all := true
		for _, p := range s.Parents[1:] {
			if _, ok := done[p.Name][f]; !ok {
				all = false
				break
			}
		}
		if all {
			fires = append(fires, f)
		}
	}
	slices.SortFunc(fires, func(a, b time.Time) int { return a.Compare(b) })
	return fires, done
}

// inputsOf is the parent run each parent counts for fire f.
func inputsOf(s StepAdvance, done map[string]map[time.Time]int64, f time.Time) map[string]int64 {
	in := make(map[string]int64, len(s.Parents))
	for _, p := range s.Parents {
		in[p.Name] = done[p.Name][f]
	}
	return in
}

// counts reports whether parent run r completes its fire for a step
// under policy: a success always; under ParentFailureRun, an end that is
// final too (its last attempt, or a skip). A run still going, or one its
// node died in (a peer runs the fire again), completes nothing.
func counts(r StepRun, attempts int, policy ParentFailure) bool {
	switch r.Status {
	case ExecSucceeded:
		return true
	case ExecRunning, ExecAbandoned, ExecFenced:
		return false
	case ExecSkipped:
		return policy == ParentFailureRun
	}
	return policy == ParentFailureRun && r.Attempt >= max(attempts, 1)
}

// Names is a list of task names kept comparable (TaskOptions stays a
// value Go compares with ==): the names joined by a newline, which no
// task name holds. It encodes as a JSON array.
type Names string

// NamesOf joins names.
func NamesOf(names ...string) Names { return Names(strings.Join(names, "\n")) }

// List returns the names.
func (n Names) List() []string {
	if n == "" {
		return nil
	}
	return strings.Split(string(n), "\n")
}

// MarshalJSON encodes the names as an array.
func (n Names) MarshalJSON() ([]byte, error) {
	l := n.List()
	if l == nil {
		l = []string{}
	}
	return json.Marshal(l)
}

// UnmarshalJSON decodes an array of names.
func (n *Names) UnmarshalJSON(b []byte) error {
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*n = NamesOf(l...)
	return nil
}
