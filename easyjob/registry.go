package easyjob

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// taskSpec is one Register call: the runtime's spec, and the first
// problem found with it.
type taskSpec struct {
	spec.Spec
	err error // reported by Register and again by Run
}

// maxNameLen keeps names printable in tables and logs.
const maxNameLen = 200

func newTaskSpec(name, cron string, fn Func, opts []Option) *taskSpec {
	s := &taskSpec{Spec: spec.Spec{Name: name, Cron: cron}}
	s.err = s.build(fn, opts)
	return s
}

// checkName refuses a task name (or handler kind: what) that tables,
// logs and the CLI could not show.
func checkName(what, name string) error {
	if name == "" || len(name) > maxNameLen || strings.TrimSpace(name) != name {
		return fmt.Errorf("%w: %s %q (1..%d characters, no surrounding spaces)", ErrInvalidName, what, name, maxNameLen)
	}
	// A control character would forge lines in logs and terminals, and
	// cannot be typed in the CLI or the dashboard.
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %s %q (control characters and invalid UTF-8 are refused)", ErrInvalidName, what, name)
	}
	return nil
}

func (s *taskSpec) build(fn Func, opts []Option) error {
	if err := checkName("task", s.Name); err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("%w: task %q", ErrNilFunc, s.Name)
	}
	s.Job, s.Fingerprint = job(fn), fingerprint(fn)
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			return fmt.Errorf("task %q: %w", s.Name, err)
		}
	}
	sched, err := schedule.Parse(s.Cron, s.Opts.Timezone)
	if err != nil {
		return fmt.Errorf("task %q: %w", s.Name, err)
	}
	switch {
	case s.Opts.Daemon && !sched.Empty():
		return fmt.Errorf("%w: task %q: a daemon runs all the time and has no cron: register it with \"\" (got %q)", ErrInvalidCron, s.Name, s.Cron)
	case s.Opts.Parents != "" && s.Parent != "":
		return fmt.Errorf("%w: task %q: Parent (a chain step) and Parents (a DAG step) do not combine", ErrInvalidOption, s.Name)
	case s.Opts.Parents != "" && !sched.Empty():
		return fmt.Errorf("%w: task %q: a DAG step runs after its parents and has no cron: register it with \"\" (got %q)", ErrInvalidCron, s.Name, s.Cron)
	case sched.Empty() && s.Parent == "" && !s.Opts.Daemon && s.Opts.Parents == "":
		return fmt.Errorf("%w: task %q: a root task needs a cron expression", ErrInvalidCron, s.Name)
	}
	s.Sched = sched.Spread(s.Name, s.Opts.Spread).Window(s.Opts.Start, s.Opts.End)
	if s.Opts.Parents != "" {
		s.Sched = schedule.AfterParents()
	}
	withDefaults(&s.Opts)
	return nil
}

// withDefaults fills the policies an option left unset.
func withDefaults(o *repository.TaskOptions) {
	if o.Misfire == "" {
		o.Misfire = repository.MisfireFireOnceNow
	}
	if o.MisfireThreshold == 0 {
		o.MisfireThreshold = schedule.DefaultMisfireThreshold
	}
	if o.Recover == "" {
		o.Recover = repository.RecoverRerun
	}
}

// validateForest checks the whole registration before anything is
// written: each spec's own error, duplicates, unknown parents and cycles.
// It links children to parents and returns the specs by name.
func validateForest(specs []*taskSpec) (map[string]*spec.Spec, error) {
	if len(specs) == 0 {
		return nil, ErrNoTasks
	}
	byName := make(map[string]*spec.Spec, len(specs))
	for _, s := range specs {
		if s.err != nil {
			return nil, s.err
		}
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("%w: %q registered twice", ErrDuplicateTask, s.Name)
		}
		s.Children = nil
		byName[s.Name] = &s.Spec
	}
	if err := splitShards(specs, byName); err != nil {
		return nil, err
	}
	if err := linkSteps(byName); err != nil {
		return nil, err
	}
	for _, s := range specs {
		if s.Parent == "" {
			continue
		}
		p, ok := byName[s.Parent]
		if !ok {
			return nil, fmt.Errorf("%w: task %q names parent %q, which is not registered", ErrUnknownParent, s.Name, s.Parent)
		}
		p.Children = append(p.Children, byName[s.Name])
	}
	for _, s := range specs {
		if s.InTx && (s.Parent != "" || len(s.Children) > 0) {
			return nil, fmt.Errorf("%w: task %q: InTx runs a task alone, not as a step of a chain (its finish commits the job's writes)", ErrInvalidOption, s.Name)
		}
		if err := allowAllAlone(&s.Spec); err != nil {
			return nil, err
		}
		if err := daemonAlone(&s.Spec); err != nil {
			return nil, err
		}
		if err := broadcastAlone(&s.Spec); err != nil {
			return nil, err
		}
		if err := stepAlone(&s.Spec, byName); err != nil {
			return nil, err
		}
	}
	for _, s := range specs {
		seen := map[string]bool{s.Name: true}
		path := []string{s.Name}
		for p := s.Parent; p != ""; p = byName[p].Parent {
			path = append(path, p)
			if seen[p] {
				return nil, fmt.Errorf("%w: %s", ErrCycle, strings.Join(path, " -> "))
			}
			seen[p] = true
		}
	}
	if err := dagCycle(byName); err != nil {
		return nil, err
	}
	for _, s := range byName {
		s.Opts.Followed = len(s.Children) > 0 || len(s.Steps) > 0
	}
	return byName, nil
}

// fingerprint names the code that registers a task: the main module of
// the binary and the job function. Replicas of one service agree on it;
// two services that register the same name in one group do not, and
// their nodes report the collision (repository.Collisions).
func fingerprint(fn any) string {
	name := "?"
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		name = f.Name()
	}
	if m := mainModule(); m != "" && !strings.HasPrefix(name, m+"/") && !strings.HasPrefix(name, m+".") {
		return m + ":" + name // main.main.func1 of two services differ by their module
	}
	return name
}

// mainModule is the path of the binary's main module ("" when the binary
// carries no build information).
var mainModule = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Path
	}
	return ""
})

// daemonAlone refuses a Daemon with what assumes fires on a schedule
// or a run that ends: a chain, InTx, retries (a failed daemon is
// restarted with a backoff of its own), an overlap policy, MaxFires, a
// window, a spread, jitter, an anchored @every, a calendar, Broadcast.
func daemonAlone(s *spec.Spec) error {
	if !s.Opts.Daemon {
		return nil
	}
	o := s.Opts
	var with string
	switch {
	case s.Parent != "" || len(s.Children) > 0:
		with = "a chain (Parent)"
	case s.InTx:
		with = "InTx"
	case o.MaxRetries > 0:
		with = "Retry (a failed daemon is restarted with a backoff of its own)"
	case o.Overlap != "" && o.Overlap != repository.OverlapWait:
		with = "an overlap policy"
	case o.MaxFires > 0:
		with = "MaxFires"
	case !o.Start.IsZero() || !o.End.IsZero():
		with = "Window"
	case o.Spread > 0:
		with = "Spread"
	case o.Jitter > 0:
		with = "Jitter"
	case o.EveryFromCreation:
		with = "EveryFromCreation"
	case o.Calendar != "":
		with = "Calendar"
	case o.Broadcast:
		with = "Broadcast"
	case o.Misfire != repository.MisfireFireOnceNow:
		with = "a misfire policy (a daemon late to start starts at once)"
	default:
		return nil
	}
	return fmt.Errorf("%w: task %q: Daemon does not combine with %s", ErrInvalidOption, s.Name, with)
}

// allowAllAlone refuses OverlapAllowAll where runs cannot go on without
// their claim: a chain (its steps follow the run), InTx (the finish
// commits the job's writes), retries (a failed run's retry is the claim's
// next fire).
func allowAllAlone(s *spec.Spec) error {
	if s.Opts.Overlap != repository.OverlapAllowAll {
		return nil
	}
	switch {
	case s.Parent != "" || len(s.Children) > 0:
		return fmt.Errorf("%w: task %q: Overlap(OverlapAllowAll) runs a task alone, not in a chain", ErrInvalidOption, s.Name)
	case s.InTx:
		return fmt.Errorf("%w: task %q: Overlap(OverlapAllowAll) and InTx do not combine (the finish that commits the job's writes is the run's claim)", ErrInvalidOption, s.Name)
	case s.Opts.MaxRetries > 0:
		return fmt.Errorf("%w: task %q: Overlap(OverlapAllowAll) runs each fire once: MaxRetries does not apply", ErrInvalidOption, s.Name)
	}
	return nil
}

// broadcastAlone refuses Broadcast with what needs one run of a fire in
// the group, or a claim: a chain (its steps follow the run on its node),
// InTx (the finish that commits is a claim's), retries (a retry is the
// claim's next fire), overlap policies (they act on the claim), MaxFires
// (it counts the group's fires), a calendar and catch-up misfires (not
// implemented for broadcast runs).
func broadcastAlone(s *spec.Spec) error {
	if !s.Opts.Broadcast {
		return nil
	}
	refuse := func(what string) error {
		return fmt.Errorf("%w: task %q: Broadcast runs each fire once on every node: %s", ErrInvalidOption, s.Name, what)
	}
	switch {
	case s.Parent != "" || len(s.Children) > 0:
		return refuse("it cannot be in a chain (Parent)")
	case s.InTx:
		return refuse("InTx does not apply (its finish commits under a claim)")
	case s.Opts.MaxRetries > 0:
		return refuse("Retry does not apply (a failed run is not run again)")
	case s.Opts.Overlap != repository.OverlapWait:
		return refuse("Overlap does not apply (each node runs each fire; runs of one node may overlap)")
	case s.Opts.MaxFires > 0:
		return refuse("MaxFires does not apply")
	case s.Opts.Calendar != "":
		return refuse("Calendar does not apply")
	case s.Opts.Misfire == repository.MisfireCatchUp:
		return refuse("Misfire(CatchUp) does not apply (a missed fire is not run late)")
	}
	return nil
}

// splitShards adds the shard rows of each sharded task (Shards) to
// byName: "name[i]", DAG steps after the task's own row, each running the
// task's job with its shard's number; the task's own row fires on its cron
// and only splits (its job succeeds at once). A DAG step after a sharded
// task follows its shards instead.
func splitShards(specs []*taskSpec, byName map[string]*spec.Spec) error {
	shardsOf := map[string][]string{}
	for _, ts := range specs {
		s := &ts.Spec
		n := s.Opts.Shards
		if n < 2 || s.Opts.ShardOf != "" {
			continue
		}
		switch {
		case s.Opts.Broadcast || s.Opts.Daemon || s.InTx || s.Parent != "":
			return fmt.Errorf("%w: task %q: Shards does not combine with Broadcast, Daemon, InTx or Parent (a chain step)", ErrInvalidOption, s.Name)
		case s.Opts.Overlap == repository.OverlapAllowAll:
			return fmt.Errorf("%w: task %q: Shards does not combine with Overlap(OverlapAllowAll)", ErrInvalidOption, s.Name)
		}
		job := s.Job
		names := make([]string, n)
		for i := range n {
			sh := *s
			sh.Name = fmt.Sprintf("%s[%d]", s.Name, i)
			if _, dup := byName[sh.Name]; dup {
				return fmt.Errorf("%w: %q is the name of a shard of %q", ErrDuplicateTask, sh.Name, s.Name)
			}
			sh.Cron, sh.Parent, sh.Children, sh.Steps = "", "", nil, nil
			sh.Opts.Parents, sh.Opts.OnParentFailure = repository.NamesOf(s.Name), repository.ParentFailureSkip
			sh.Opts.ShardOf, sh.Opts.Shard = s.Name, i
			sh.Opts.Misfire, sh.Opts.MisfireThreshold, sh.Opts.CatchUpMax = repository.MisfireFireOnceNow, schedule.DefaultMisfireThreshold, 0
			sh.Opts.Start, sh.Opts.End, sh.Opts.Spread, sh.Opts.Jitter, sh.Opts.EveryFromCreation, sh.Opts.Calendar = time.Time{}, time.Time{}, 0, 0, false, ""
			sh.Opts.MaxFires, sh.Opts.PauseAfter = 0, 0
			sh.Sched = schedule.AfterParents()
			sh.Job = job
			byName[sh.Name] = &sh
			names[i] = sh.Name
		}
		s.Job = func(context.Context, spec.Run) error { return nil } // the split: its finish makes the shards due
		s.Opts.Timeout, s.Opts.MaxRetries = 0, 0
		shardsOf[s.Name] = names
	}
	if len(shardsOf) == 0 {
		return nil
	}
	for _, s := range byName {
		if s.Opts.Parents == "" || s.Opts.ShardOf != "" {
			continue
		}
		var ps []string
		for _, p := range s.Opts.Parents.List() {
			if sh, ok := shardsOf[p]; ok {
				ps = append(ps, sh...)
			} else {
				ps = append(ps, p)
			}
		}
		s.Opts.Parents = repository.NamesOf(ps...)
	}
	return nil
}

// linkSteps checks the parents of each DAG step and lists each step
// under its parents (spec.Steps).
func linkSteps(byName map[string]*spec.Spec) error {
	for _, s := range byName {
		s.Steps = nil
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := byName[name]
		for _, p := range s.Opts.Parents.List() {
			ps, ok := byName[p]
			if !ok {
				return fmt.Errorf("%w: task %q names parent %q (Parents), which is not registered", ErrUnknownParent, s.Name, p)
			}
			ps.Steps = append(ps.Steps, s.Name)
		}
	}
	return nil
}

// dagCycle refuses a cycle through Parents edges (and Parent edges with
// them), depth first from parent to child; validateForest has refused
// the cycles of Parent edges alone, naming them child first.
func dagCycle(byName map[string]*spec.Spec) error {
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	if !slices.ContainsFunc(names, func(n string) bool { return byName[n].IsStep() }) {
		return nil // no Parents edge: Parent cycles were refused already
	}
	chainKids := map[string][]string{}
	for _, name := range names {
		if p := byName[name].Parent; p != "" {
			chainKids[p] = append(chainKids[p], name)
		}
	}
	const (
		unseen = iota
		open
		closed
	)
	state := map[string]int{}
	var path []string
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case open:
			i := slices.Index(path, name)
			return fmt.Errorf("%w: %s", ErrCycle, strings.Join(append(slices.Clone(path[i:]), name), " -> "))
		case closed:
			return nil
		}
		state[name] = open
		path = append(path, name)
		next := append(slices.Clone(byName[name].Steps), chainKids[name]...)
		sort.Strings(next)
		for _, c := range next {
			if err := visit(c); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[name] = closed
		return nil
	}
	for _, name := range names {
		if err := visit(name); err != nil {
			return err
		}
	}
	return nil
}

// stepAlone refuses, on a DAG step or a DAG parent, what assumes one
// fire a cron times or a run per fire in the group.
func stepAlone(s *spec.Spec, byName map[string]*spec.Spec) error {
	if len(s.Steps) > 0 && (s.Opts.Broadcast || s.Opts.Daemon) {
		return fmt.Errorf("%w: task %q: a Broadcast or Daemon task cannot be a DAG parent (a step after it has no one run per fire to follow)", ErrInvalidOption, s.Name)
	}
	if len(s.Steps) > 0 && s.Opts.Overlap == repository.OverlapAllowAll {
		return fmt.Errorf("%w: task %q: Overlap(OverlapAllowAll) does not combine with DAG steps after it", ErrInvalidOption, s.Name)
	}
	if !s.IsStep() {
		return nil
	}
	o := s.Opts
	var with string
	switch {
	case o.Broadcast:
		with = "Broadcast"
	case o.Daemon:
		with = "Daemon"
	case s.InTx:
		with = "InTx"
	case o.Overlap != repository.OverlapWait:
		with = "an overlap policy"
	case o.Misfire != repository.MisfireFireOnceNow:
		with = "a misfire policy (a step runs whenever its parents make it due)"
	case o.MaxFires > 0:
		with = "MaxFires"
	case o.Calendar != "":
		with = "Calendar"
	case !o.Start.IsZero() || !o.End.IsZero() || o.Spread > 0 || o.Jitter > 0 || o.EveryFromCreation:
		with = "Window, Spread, Jitter or EveryFromCreation (its parents time it)"
	default:
		return nil
	}
	return fmt.Errorf("%w: task %q: a DAG step (Parents) does not combine with %s", ErrInvalidOption, s.Name, with)
}
