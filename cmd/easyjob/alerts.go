package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/repository"
)

// envWebhookSecret is where `alerts add` reads a webhook's secret when
// --webhook-secret-env names no other variable: a secret on the command
// line would stay in the shell's history.
const envWebhookSecret = "EASYJOB_WEBHOOK_SECRET"

// alertsFlags is `easyjob alerts list | add NAME --kind K ... | remove
// NAME | history`: the group's runtime alert rules and its alerts.
func alertsFlags(fs *flag.FlagSet) action {
	kind := fs.String("kind", "", "add: what to watch: "+kindList())
	task := fs.String("task", "", "add: the task watched (default: every task of the group)")
	count := fs.Int("count", 0, "add: consecutive_failures: failed runs in a row (default 3)")
	after := fs.Duration("after", 0, "add: late: how late a fire may start; deadman: how long without a success")
	webhook := fs.String("webhook", "", "add: send this rule's alerts to this URL (a signed JSON POST) instead of the nodes' notifiers")
	secretEnv := fs.String("webhook-secret-env", envWebhookSecret, "add: the environment variable holding the webhook's HMAC secret (never given on the command line)")
	open := fs.Bool("open", false, "history: only the alerts open or not yet delivered")
	limit := fs.Int("limit", 20, "history: how many alerts to show (at most 1000)")
	before := fs.Int64("before", 0, "history: alerts with an id below this (the next page)")
	return func(ctx context.Context, e *env, args []string) error {
		verb, name := args[0], ""
		if len(args) > 1 {
			name = args[1]
		}
		switch {
		case verb == "list" && name == "":
			return listAlertRules(ctx, e)
		case verb == "history" && name == "":
			if *limit < 1 || *limit > 1000 {
				return usagef("--limit must be between 1 and 1000 (got %d)", *limit)
			}
			return alertHistory(ctx, e, repository.AlertFilter{Live: *open, Limit: *limit, BeforeID: *before})
		case verb == "remove" && name != "":
			if err := e.client.RemoveAlertRule(ctx, name); err != nil {
				return err
			}
			if e.json {
				return e.emit(map[string]any{"removed": name})
			}
			_, err := fmt.Fprintf(e.out, "removed alert rule %q: every node drops it within a second or so\n", name)
			return err
		case verb == "add":
			if *kind == "" {
				return usagef("alerts add: --kind is required (%s)", kindList())
			}
			r := alert.StoredRule{Name: name, Task: *task, Kind: alert.Kind(*kind), Count: *count, After: *after, WebhookURL: *webhook}
			if *webhook != "" {
				r.WebhookSecret = os.Getenv(*secretEnv)
			}
			got, err := e.client.PutAlertRule(ctx, r)
			if err != nil {
				return err
			}
			if e.json {
				return e.emit(got)
			}
			_, err = fmt.Fprintf(e.out, "added alert rule %q: %s (every node applies it within a second or so)\n", got.Name, describeRule(got))
			return err
		}
		return usagef("alerts: want list, add [NAME] --kind KIND ..., remove NAME or history (got %q)", strings.Join(args, " "))
	}
}

func kindList() string {
	ks := make([]string, len(repository.AlertKinds))
	for i, k := range repository.AlertKinds {
		ks[i] = string(k)
	}
	return strings.Join(ks, ", ")
}

// describeRule says what a rule watches and where it goes, in a line.
func describeRule(r alert.StoredRule) string {
	what := string(r.Kind)
	switch r.Kind {
	case alert.ConsecutiveFailures:
		what = fmt.Sprintf("%d failures in a row", r.Count)
	case alert.Late:
		what = fmt.Sprintf("fires later than %v", r.After)
	case alert.Deadman:
		what = fmt.Sprintf("no success for %v", r.After)
	}
	of := "every task"
	if r.Task != "" {
		of = "task " + r.Task
	}
	if r.Kind == alert.NodeDied {
		of = "every node"
	}
	to := "the nodes' notifiers"
	if r.WebhookURL != "" {
		to = alert.RedactURL(r.WebhookURL)
		if r.Signed {
			to += " (signed)"
		}
	}
	return fmt.Sprintf("%s of %s, to %s", what, of, to)
}

// listAlertRules prints the group's runtime rules.
func listAlertRules(ctx context.Context, e *env) error {
	rs, err := e.client.AlertRules(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.emit(nonNil(rs))
	}
	if len(rs) == 0 {
		_, err := fmt.Fprintf(e.out, "no alert rules added at runtime in group %q (rules in code are in each node's Config.Alerts)\n", e.group)
		return err
	}
	t := newTable(e.out, "NAME", "KIND", "TASK", "THRESHOLD", "TO", "BY")
	for _, r := range rs {
		threshold := ""
		switch {
		case r.Count > 0:
			threshold = strconv.Itoa(r.Count)
		case r.After > 0:
			threshold = r.After.String()
		}
		to := "notifiers"
		if r.WebhookURL != "" {
			to = alert.RedactURL(r.WebhookURL)
		}
		task := r.Task
		if task == "" {
			task = "*"
		}
		t.row(r.Name, string(r.Kind), task, threshold, to, r.CreatedBy)
	}
	t.flush()
	return nil
}

// alertHistory prints the group's alerts, newest first.
func alertHistory(ctx context.Context, e *env, f repository.AlertFilter) error {
	xs, err := e.client.AlertHistory(ctx, f)
	if err != nil {
		return err
	}
	if e.json {
		return e.emit(nonNil(xs))
	}
	if len(xs) == 0 {
		_, err := fmt.Fprintf(e.out, "no alerts in group %q\n", e.group)
		return err
	}
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	t := newTable(e.out, "ID", "FIRED", "STATE", "RULE", "SUBJECT", "DELIVERED", "MESSAGE")
	for _, x := range xs {
		state := string(x.State)
		if x.State == alert.Resolved {
			state += " " + relTime(x.ResolvedAt, now)
		}
		t.row(strconv.FormatInt(x.ID, 10), x.FiredAt.UTC().Format(time.RFC3339)+" ("+relTime(x.FiredAt, now)+")", state, x.Rule, x.Subject,
			delivery(x), truncate(oneLine(x.Message), 80))
	}
	t.flush()
	if len(xs) == f.Limit {
		fmt.Fprintf(e.out, "more: --before %d\n", xs[len(xs)-1].ID)
	}
	return nil
}

// delivery says how an alert's notifications went.
func delivery(x alert.Record) string {
	switch {
	case x.Attempts > 0:
		return fmt.Sprintf("failing (%d attempts): %s", x.Attempts, truncate(oneLine(x.LastError), 40))
	case !x.Delivered:
		return "pending"
	case x.State == alert.Resolved && !x.ResolveDelivered:
		return "resolved pending"
	}
	return "yes"
}
