package alerting

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// noRulesEvery: with no rule known, the rules are read every this many
// intervals only.
const noRulesEvery = 5

// tasksEvery: the group checks that read every task of the group
// (dead-man, missing handlers, failure streaks resolved elsewhere) run
// every this many intervals; node deaths are checked every interval.
const tasksEvery = 5

// pruneEvery: the lowest live node applies Config.Retention every this
// many intervals.
const pruneEvery = 60

// fireKey is the key of an occurrence about the fire at t.
func fireKey(t time.Time) string { return "fire " + t.UTC().Format(time.RFC3339Nano) }

func clock(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// handle turns one observation of the node into events.
func (s *Service) handle(ctx context.Context, o observation) {
	idx := s.idx.Load()
	for _, r := range idx.rulesOf(o.task) {
		switch o.kind {
		case obsFinished:
			s.finished(ctx, idx, r, o)
		case obsStarted:
			switch {
			case r.Kind == alert.Late && o.lag > r.After:
				s.open(ctx, r, o.task, fireKey(o.scheduled), fmt.Sprintf("%s: the fire of %s started %v late (threshold %v)",
					o.task, clock(o.scheduled), o.lag.Round(time.Millisecond), r.After))
			case r.Kind == alert.Late || (r.Kind == alert.Missed && !o.late):
				if idx.isOpen(r.Name, o.task) {
					s.resolve(ctx, r.Name, o.task, fmt.Sprintf("%s: the fire of %s started on time", o.task, clock(o.scheduled)))
				}
			}
		case obsMisfired:
			if r.Kind == alert.Missed {
				s.open(ctx, r, o.task, fireKey(o.scheduled), fmt.Sprintf("%s: the fire of %s was missed (found %v late; misfire policy %s)",
					o.task, clock(o.scheduled), o.lag.Round(time.Millisecond), o.misfire))
			}
		}
	}
}

// finished acts on a finish's row for rule r.
func (s *Service) finished(ctx context.Context, idx *index, r *rule, o observation) {
	row := o.row
	failed := row.LastStatus == repository.ExecFailed || row.LastStatus == repository.ExecTimedOut
	switch {
	case failed && r.Kind == alert.Failure:
		s.open(ctx, r, row.Name, fireKey(o.scheduled)+" attempt "+strconv.Itoa(max(row.Attempt, 1)),
			fmt.Sprintf("%s failed (fire of %s): %s", row.Name, clock(o.scheduled), orNone(row.LastError)))
	case failed && r.Kind == alert.ConsecutiveFailures && row.Failures >= r.Count:
		s.open(ctx, r, row.Name, "streak "+clock(o.scheduled)+" "+strconv.Itoa(row.Failures/r.Count),
			fmt.Sprintf("%s failed %d times in a row, the last: %s", row.Name, row.Failures, orNone(row.LastError)))
	case row.LastStatus == repository.ExecSucceeded && idx.isOpen(r.Name, row.Name):
		s.resolve(ctx, r.Name, row.Name, fmt.Sprintf("%s succeeded (fire of %s)", row.Name, clock(o.scheduled)))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no error text)"
	}
	return s
}

// open records an occurrence; the node delivers it if it won.
func (s *Service) open(ctx context.Context, r *rule, subject, key, message string) {
	e, won, err := s.store.OpenAlert(ctx, repository.AlertEvent{
		Group: s.cfg.Group, Rule: r.Name, Kind: r.Kind, Subject: subject, Key: key, Message: message, Owner: s.node.ID(),
	})
	if err != nil {
		s.log.Warn().Err(err).Str("rule", r.Name).Str("subject", subject).Msg("easyjob: an alert could not be recorded")
		return
	}
	if e.ID != 0 && e.Open() {
		s.idx.Store(s.idx.Load().withOpen(r.Name, subject, true))
	}
	if won {
		s.log.Info().Str("rule", r.Name).Str("subject", subject).Int64("alert", e.ID).Msg("easyjob: alert fired")
		s.enqueue(e)
	}
}

// resolve resolves the open event of rule and subject.
func (s *Service) resolve(ctx context.Context, ruleName, subject, message string) {
	e, won, err := s.store.ResolveAlert(ctx, s.cfg.Group, ruleName, subject, message)
	if err != nil {
		s.log.Warn().Err(err).Str("rule", ruleName).Str("subject", subject).Msg("easyjob: an alert could not be resolved")
		return
	}
	s.idx.Store(s.idx.Load().withOpen(ruleName, subject, false))
	if won {
		s.log.Info().Str("rule", ruleName).Str("subject", subject).Int64("alert", e.ID).Msg("easyjob: alert resolved")
		if e.Owner == s.node.ID() {
			s.enqueue(e)
		}
	}
}

// tick reads the rules and the live events, delivers or takes over what
// is pending, and runs the group checks on the lowest live node.
func (s *Service) tick(ctx context.Context) {
	s.ticks++
	idx := s.idx.Load()
	if idx.any == 0 && len(idx.open) == 0 && s.ticks%noRulesEvery != 1 {
		return
	}
	stored, err := s.store.AlertRules(ctx, s.cfg.Group)
	if err != nil {
		s.log.Debug().Err(err).Msg("easyjob: read alert rules")
		return
	}
	if len(stored) == 0 && len(s.cfg.Rules) == 0 && idx.any == 0 {
		return // nothing watched, nothing was
	}
	live, err := s.store.AlertEvents(ctx, s.cfg.Group, repository.AlertFilter{Live: true, Limit: 1000})
	if err != nil {
		s.log.Debug().Err(err).Msg("easyjob: read live alerts")
		return
	}
	open := map[openKey]bool{}
	var theirs []repository.AlertEvent
	for _, e := range live {
		if e.Open() {
			open[openKey{e.Rule, e.Subject}] = true
		}
		if !e.Pending() || e.Attempts >= alert.MaxAttempts {
			if e.Pending() && !s.gaveUp[e.ID] {
				s.gaveUp[e.ID] = true
				s.log.Error().Int64("alert", e.ID).Str("rule", e.Rule).Str("error", e.LastError).Msg("easyjob: an alert was not delivered: attempts exhausted")
			}
			continue
		}
		if e.Owner == s.node.ID() {
			s.enqueue(e)
		} else {
			theirs = append(theirs, e)
		}
	}
	idx = buildIndex(s.cfg.Rules, stored, open, s.cfg.Notifiers)
	s.idx.Store(idx)
	if len(theirs) > 0 {
		s.takeOver(ctx, theirs)
	}
	if lv := s.node.Live(); len(lv) > 0 && lv[0].ID != s.node.ID() {
		return // the group checks are the lowest live node's
	}
	s.groupChecks(ctx, idx, live)
}

// takeOver takes the pending events of owners dead for DeadAfter.
func (s *Service) takeOver(ctx context.Context, theirs []repository.AlertEvent) {
	alive, err := s.store.LiveNodes(ctx, s.cfg.Group, s.cfg.DeadAfter)
	if err != nil {
		return
	}
	up := map[repository.NodeID]bool{}
	for _, n := range alive {
		up[n.ID] = true
	}
	for _, e := range theirs {
		if up[e.Owner] {
			continue
		}
		got, err := s.store.TakeAlert(ctx, e.ID, e.Version, s.node.ID())
		if err != nil {
			continue // a peer took it first, or it changed: the next pass sees
		}
		s.log.Info().Int64("alert", e.ID).Int64("dead_owner", int64(e.Owner)).Msg("easyjob: took over the delivery of an alert")
		s.enqueue(got)
	}
}

// groupChecks evaluates what no single fire shows.
func (s *Service) groupChecks(ctx context.Context, idx *index, live []repository.AlertEvent) {
	var needTasks bool
	var nodeRules, deadman, noHandler []*rule
	for _, r := range idx.group {
		switch r.Kind {
		case alert.NodeDied:
			nodeRules = append(nodeRules, r)
		case alert.Deadman:
			deadman, needTasks = append(deadman, r), true
		case alert.NoHandler:
			noHandler, needTasks = append(noHandler, r), true
		}
	}
	var streaks []repository.AlertEvent // open failure alerts: resolved by a success anywhere
	for _, e := range live {
		if e.Open() && (e.Kind == alert.Failure || e.Kind == alert.ConsecutiveFailures) {
			streaks, needTasks = append(streaks, e), true
		}
	}
	if len(nodeRules) > 0 {
		s.checkNodes(ctx, idx, nodeRules)
	}
	if s.cfg.Retention > 0 && s.groupTicks%pruneEvery == 0 {
		if k, err := s.store.PruneAlerts(ctx, s.cfg.Group, s.node.Now().Add(-s.cfg.Retention)); err == nil && k > 0 {
			s.log.Debug().Int("deleted", k).Msg("easyjob: pruned resolved alerts")
		}
	}
	if s.groupTicks++; !needTasks || s.groupTicks%tasksEvery != 1 {
		return
	}
	tasks, err := s.store.Tasks(ctx, s.cfg.Group)
	if err != nil {
		return
	}
	byName := make(map[string]*repository.Task, len(tasks))
	for i := range tasks {
		byName[tasks[i].Name] = &tasks[i]
	}
	for _, e := range streaks {
		if t := byName[e.Subject]; t != nil && t.LastStatus == repository.ExecSucceeded && t.LastFinishedAt.After(e.FiredAt) {
			s.resolve(ctx, e.Rule, e.Subject, fmt.Sprintf("%s succeeded at %s", t.Name, clock(t.LastFinishedAt)))
		}
	}
	if len(deadman) > 0 {
		s.checkDeadman(ctx, idx, deadman, tasks)
	}
	if len(noHandler) > 0 {
		s.checkHandlers(ctx, idx, noHandler, tasks)
	}
}

// watches reports whether r watches t.
func watches(r *rule, t *repository.Task) bool {
	return (r.Task == "" || r.Task == t.Name) && t.Status != repository.TaskRemoved
}

// checkNodes opens NodeDied alerts for nodes silent past DeadAfter that
// did not leave, and resolves those of nodes back.
func (s *Service) checkNodes(ctx context.Context, idx *index, rules []*rule) {
	nodes, err := s.store.Nodes(ctx, s.cfg.Group)
	if err != nil {
		return
	}
	now := s.node.Now()
	byID := map[string]repository.Node{}
	liveNames := map[string]repository.NodeID{}
	for _, n := range nodes {
		byID["node "+strconv.FormatInt(int64(n.ID), 10)] = n
		if now.Sub(n.HeartbeatAt) < s.cfg.DeadAfter && !n.Leaving {
			liveNames[n.Name] = n.ID
		}
	}
	for _, r := range rules {
		for subject, n := range byID {
			if now.Sub(n.HeartbeatAt) > s.cfg.DeadAfter && !n.Leaving && !idx.isOpen(r.Name, subject) {
				if id, ok := liveNames[n.Name]; ok && id != n.ID {
					continue // restarted under its name already
				}
				s.open(ctx, r, subject, strconv.FormatInt(int64(n.ID), 10),
					fmt.Sprintf("%s (%s) died: no heartbeat since %s (dead after %v)", subject, n.Name, clock(n.HeartbeatAt), s.cfg.DeadAfter))
			}
		}
		for k := range idx.open {
			if k.rule != r.Name {
				continue
			}
			n, ok := byID[k.subject]
			switch {
			case !ok:
				s.resolve(ctx, r.Name, k.subject, k.subject+": its row is gone (shut down or expired)")
			case now.Sub(n.HeartbeatAt) < s.cfg.DeadAfter:
				s.resolve(ctx, r.Name, k.subject, fmt.Sprintf("%s (%s) heartbeats again", k.subject, n.Name))
			default:
				if id, ok := liveNames[n.Name]; ok {
					s.resolve(ctx, r.Name, k.subject, fmt.Sprintf("%s is back as node %d", n.Name, id))
				}
			}
		}
	}
}

// checkDeadman opens Deadman alerts of tasks without a success for
// After, and resolves those that succeeded since.
func (s *Service) checkDeadman(ctx context.Context, idx *index, rules []*rule, tasks []repository.Task) {
	now := s.node.Now()
	for i := range tasks {
		t := &tasks[i]
		for _, r := range rules {
			if !watches(r, t) {
				continue
			}
			good := s.lastSuccess(ctx, t)
			open := idx.isOpen(r.Name, t.Name)
			switch {
			case !open && !t.Paused && t.Status != repository.TaskFinished && now.Sub(good) > r.After:
				since := "its creation at " + clock(good)
				if !good.Equal(t.CreatedAt) {
					since = "its last success at " + clock(good)
				}
				s.open(ctx, r, t.Name, "since "+clock(good), fmt.Sprintf("%s has not succeeded for %v: not since %s", t.Name, r.After, since))
			case open && now.Sub(good) <= r.After:
				s.resolve(ctx, r.Name, t.Name, fmt.Sprintf("%s succeeded at %s", t.Name, clock(good)))
			}
		}
	}
}

// lastSuccess is when t last succeeded (its creation when it never
// did), read from the history only when its last run did not succeed
// and it finished since the last read.
func (s *Service) lastSuccess(ctx context.Context, t *repository.Task) time.Time {
	if t.LastStatus == repository.ExecSucceeded {
		s.lastGood[t.Name], s.lastSeen[t.Name] = t.LastFinishedAt, t.LastFinishedAt
		return t.LastFinishedAt
	}
	if seen, ok := s.lastSeen[t.Name]; ok && seen.Equal(t.LastFinishedAt) {
		return s.lastGood[t.Name]
	}
	good := t.CreatedAt
	if !t.LastFinishedAt.IsZero() {
		xs, err := s.store.History(ctx, s.cfg.Group, t.Name, repository.HistoryFilter{Status: repository.ExecSucceeded, Limit: 1})
		if err != nil {
			return t.LastFinishedAt // unknown: no alert on a failed read
		}
		if len(xs) > 0 {
			good = xs[0].FinishedAt
		}
	}
	s.lastGood[t.Name], s.lastSeen[t.Name] = good, t.LastFinishedAt
	return good
}

// checkHandlers opens NoHandler alerts of tasks no live node registers,
// and resolves those some node registers again.
func (s *Service) checkHandlers(ctx context.Context, idx *index, rules []*rule, tasks []repository.Task) {
	stale, err := repository.StaleTest(ctx, s.store, s.cfg.Group, s.cfg.LiveAfter, nil)
	if err != nil {
		return
	}
	now := s.node.Now()
	for i := range tasks {
		t := &tasks[i]
		handler := t.Handler
		if handler == "" {
			handler = t.Name
		}
		for _, r := range rules {
			if !watches(r, t) {
				continue
			}
			open := idx.isOpen(r.Name, t.Name)
			switch missing := stale(handler); {
			case missing && !open && t.Status != repository.TaskFinished:
				s.open(ctx, r, t.Name, "since "+now.UTC().Format(time.RFC3339Nano),
					fmt.Sprintf("%s: no live node registers its handler %q", t.Name, handler))
			case !missing && open:
				s.resolve(ctx, r.Name, t.Name, fmt.Sprintf("%s: a live node registers its handler %q again", t.Name, handler))
			}
		}
	}
}
