package dashboard

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// funcs are the helpers the templates call. None returns template.HTML:
// everything they produce is escaped by html/template like any value.
var funcs = template.FuncMap{
	"ago":        ago,
	"when":       when,
	"dur":        shortDur,
	"clock":      func(t time.Time) string { return zeroOr(t, t.UTC().Format("15:04:05")) },
	"stamp":      func(t time.Time) string { return zeroOr(t, t.UTC().Format("2006-01-02 15:04:05 UTC")) },
	"rfc3339":    func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"words":      describeCron,
	"trunc":      truncate,
	"compact":    compactJSON,
	"explain":    explainStatus,
	"whykind":    explainKind,
	"dict":       dict,
	"nodestate":  nodeState,
	"prev":       func(n int) int { return n - 1 },
	"next":       func(n int) int { return n + 1 },
	"pathescape": url.PathEscape,
	"sample":     func() int { return repository.GroupRunSample },
	"taskword":   taskWord,
}

// taskWord names a task status as the pages show it: the store's doing
// (a fire claimed and under way) is running.
func taskWord(s repository.TaskStatus) string {
	if s == repository.TaskDoing {
		return "running"
	}
	return string(s)
}

// dict makes a map of key, value pairs, to pass several values to a
// template.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		m[k] = kv[i+1]
	}
	return m
}

func zeroOr(t time.Time, s string) string {
	if t.IsZero() {
		return "—"
	}
	return s
}

// ago says t relative to now: "3s ago", "in 4m10s", "now".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return "in " + shortDur(d)
	default:
		return shortDur(-d) + " ago"
	}
}

// when shows a time of the next day or so as a clock, a later one with
// its date.
func when(t, now time.Time) string {
	if t.Sub(now) < 20*time.Hour {
		return t.UTC().Format("15:04:05")
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// shortDur renders a duration to two units at most: 350ms, 2.3s, 4m5s,
// 3h4m, 2d3h.
func shortDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour && int(d.Seconds())%60 == 0:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour && int(d.Minutes())%60 == 0:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// truncate shortens s to n runes on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// statusHelp explains the execution statuses an operator may not know.
var statusHelp = map[string]string{
	"running":   "started and not finished yet",
	"succeeded": "the job returned nil",
	"failed":    "the job returned an error or panicked; a retry may follow (Retry option)",
	"timed_out": "the job ran past its Timeout; its context was cancelled",
	"abandoned": "its node died mid-run (no heartbeat for DeadAfter); a peer recovered the task and re-ran the fire unless SkipInterrupted",
	"fenced":    "it finished after its node had lost the claim (the node was silent too long, or a peer recovered the task): recorded, not applied",
	"skipped":   "not run: its misfire policy skipped it, or its parent failed",
}

func explainStatus(status string) string { return statusHelp[status] }

// kindNote says why a run of a kind ran.
type kindNote struct {
	Kind easyjob.RunKind
	Help string
}

// kindNotes explain the run kinds, in the order the help lists them: a
// cron run and a manual one in the same second are two fires asked for,
// not a double fire.
var kindNotes = []kindNote{
	{easyjob.RunCron, "its cron came due"},
	{easyjob.RunManual, "an operator triggered it (dashboard, CLI or Client.Trigger); the audit log says who"},
	{easyjob.RunRetry, "a retry of a failed or timed out run (Retry option)"},
	{easyjob.RunMisfire, "a late fire, run by its misfire policy"},
	{easyjob.RunChain, "a chain step, run after its parent succeeded"},
}

// explainKind says why a run of kind k ran.
func explainKind(k easyjob.RunKind) string {
	for _, n := range kindNotes {
		if n.Kind == k {
			return n.Help
		}
	}
	return ""
}
