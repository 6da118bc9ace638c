package easyjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Func is a job. It gets a context carrying the execution's metadata
// (InfoFromContext) that is cancelled on timeout, shutdown or a lost claim.
// A returned error or a panic fails the run.
type Func func(ctx context.Context) error

// taskSpec is one Register call.
type taskSpec struct {
	name   string
	cron   string
	parent string
	fn     Func
	opts   repository.TaskOptions
	sched  schedule
	err    error // the first problem found by Register; reported again by Run

	children []*taskSpec // filled by validateForest, registration order
}

// maxNameLen keeps names printable in tables and logs.
const maxNameLen = 200

func newTaskSpec(name, cron string, fn Func, opts []Option) *taskSpec {
	s := &taskSpec{name: name, cron: cron, fn: fn}
	s.err = s.build(opts)
	return s
}

func (s *taskSpec) build(opts []Option) error {
	if s.name == "" || len(s.name) > maxNameLen || strings.TrimSpace(s.name) != s.name {
		return fmt.Errorf("%w: %q (1..%d characters, no surrounding spaces)", ErrInvalidName, s.name, maxNameLen)
	}
	if s.fn == nil {
		return fmt.Errorf("%w: task %q", ErrNilFunc, s.name)
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			return fmt.Errorf("task %q: %w", s.name, err)
		}
	}
	sched, err := parseSchedule(s.cron, s.opts.Timezone)
	if err != nil {
		return fmt.Errorf("task %q: %w", s.name, err)
	}
	if sched.empty() && s.parent == "" {
		return fmt.Errorf("%w: task %q: a root task needs a cron expression", ErrInvalidCron, s.name)
	}
	s.sched = sched
	if s.opts.Misfire == "" {
		s.opts.Misfire = repository.MisfireFireOnceNow
	}
	if s.opts.MisfireThreshold == 0 {
		s.opts.MisfireThreshold = defaultMisfireThreshold
	}
	if s.opts.Recover == "" {
		s.opts.Recover = repository.RecoverRerun
	}
	return nil
}

const defaultMisfireThreshold = 5 * time.Second

// validateForest checks the whole registration before anything is
// written: each spec's own error, duplicates, unknown parents and cycles.
// It links children to parents and returns the specs by name.
func validateForest(specs []*taskSpec) (map[string]*taskSpec, error) {
	if len(specs) == 0 {
		return nil, ErrNoTasks
	}
	byName := make(map[string]*taskSpec, len(specs))
	for _, s := range specs {
		if s.err != nil {
			return nil, s.err
		}
		if _, dup := byName[s.name]; dup {
			return nil, fmt.Errorf("%w: %q registered twice", ErrDuplicateTask, s.name)
		}
		byName[s.name] = s
		s.children = nil
	}
	for _, s := range specs {
		if s.parent == "" {
			continue
		}
		p, ok := byName[s.parent]
		if !ok {
			return nil, fmt.Errorf("%w: task %q names parent %q, which is not registered", ErrUnknownParent, s.name, s.parent)
		}
		p.children = append(p.children, s)
	}
	for _, s := range specs {
		seen := map[string]bool{s.name: true}
		path := []string{s.name}
		for p := s.parent; p != ""; p = byName[p].parent {
			path = append(path, p)
			if seen[p] {
				return nil, fmt.Errorf("%w: %s", ErrCycle, strings.Join(path, " -> "))
			}
			seen[p] = true
		}
	}
	return byName, nil
}
