package alerting

import (
	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// rule is a rule in force: from code or from the store, with the
// notifiers that deliver its events.
type rule struct {
	alert.Rule
	notifiers []alert.Notifier
}

// openKey is a rule and subject with an open event.
type openKey struct{ rule, subject string }

// index is what the node's calls consult: the rules by task, and the
// open events. It is never changed once published (copy on write).
type index struct {
	byTask map[string][]*rule // rules naming a task, then the group's
	all    []*rule            // rules of every task
	byName map[string]*rule
	open   map[openKey]bool
	// any counts the rules; group lists the rules the group check reads
	// the tasks or nodes for.
	any   int
	group []*rule
}

// buildIndex makes the index of the rules in code and the stored ones
// (code wins a name both have), with the open events.
func buildIndex(code []alert.Rule, stored []repository.AlertRule, open map[openKey]bool, fallback []alert.Notifier) *index {
	x := &index{byTask: map[string][]*rule{}, byName: map[string]*rule{}, open: open}
	if x.open == nil {
		x.open = map[openKey]bool{}
	}
	add := func(r *rule) {
		if _, dup := x.byName[r.Name]; dup {
			return
		}
		x.byName[r.Name] = r
		x.any++
		switch r.Kind {
		case alert.Deadman, alert.NodeDied, alert.NoHandler:
			x.group = append(x.group, r)
		}
		if r.Kind == alert.NodeDied {
			return
		}
		if r.Task == "" {
			x.all = append(x.all, r)
		} else {
			x.byTask[r.Task] = append(x.byTask[r.Task], r)
		}
	}
	for _, r := range code {
		ns := r.Notifiers
		if len(ns) == 0 {
			ns = fallback
		}
		add(&rule{Rule: r, notifiers: ns})
	}
	for _, sr := range stored {
		r, err := alert.Rule{Name: sr.Name, Task: sr.Task, Kind: sr.Kind, Count: sr.Count, After: sr.After}.Normalize()
		if err != nil {
			continue // written by a newer binary, say
		}
		ns := fallback
		if sr.WebhookURL != "" {
			ns = []alert.Notifier{&alert.Webhook{URL: sr.WebhookURL, Secret: sr.WebhookSecret}}
		}
		add(&rule{Rule: r, notifiers: ns})
	}
	// A task's own rules are followed by the group's, once, here: the
	// fire path then looks them up without allocating.
	for task, own := range x.byTask {
		x.byTask[task] = append(own[:len(own):len(own)], x.all...)
	}
	return x
}

// rulesOf lists the rules that watch task: its own, then the group's.
// It does not allocate.
func (x *index) rulesOf(task string) []*rule {
	if x.any == 0 {
		return nil
	}
	if own, ok := x.byTask[task]; ok {
		return own
	}
	return x.all
}

// isOpen reports an open event of rule and subject.
func (x *index) isOpen(rule, subject string) bool { return x.open[openKey{rule, subject}] }

// withOpen returns a copy of x with the event of rule and subject open
// or not.
func (x *index) withOpen(rule, subject string, open bool) *index {
	if x.isOpen(rule, subject) == open {
		return x
	}
	y := *x
	y.open = make(map[openKey]bool, len(x.open)+1)
	for k := range x.open {
		y.open[k] = true
	}
	if open {
		y.open[openKey{rule, subject}] = true
	} else {
		delete(y.open, openKey{rule, subject})
	}
	return &y
}
