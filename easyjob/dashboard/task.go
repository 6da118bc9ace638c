package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// historyStatuses are the status filter's choices ("" for all).
var historyStatuses = []string{"", "running", "succeeded", "failed", "timed_out", "abandoned", "fenced", "skipped", "cancelled"}

// sinceChoices are the time filter's choices ("" for all time).
var sinceChoices = []sinceChoice{
	{"", "any time", 0}, {"15m", "last 15 minutes", 15 * time.Minute}, {"1h", "last hour", time.Hour},
	{"6h", "last 6 hours", 6 * time.Hour}, {"24h", "last 24 hours", 24 * time.Hour}, {"7d", "last 7 days", 7 * 24 * time.Hour},
}

type sinceChoice struct {
	Key, Label string
	D          time.Duration
}

// taskData is the task page: the task, its policies, its chain, its runs.
type taskData struct {
	Snap     snapshot
	Task     taskRow
	Policies []policy
	Tree     *treeNode
	Runs     []runRow
	// Charts plot the runs listed: start lag, duration, outcomes.
	Charts []chart
	// The history filters and paging.
	Status, Since string
	Statuses      []string
	Sinces        []sinceChoice
	Before, Older int64
	Help          map[string]string
	Kinds         []kindNote
	// Audit are the task's last operator actions, newest first; AuditErr
	// says what kind of failure kept them from being read.
	Audit    []easyjob.AuditEntry
	AuditErr string
	// ShowVersions: the page has a Versions section (hasVersions), with
	// Versions, the definitions the task took, newest first; VersionsErr
	// says what kind of failure kept them from being read.
	ShowVersions bool
	Versions     []easyjob.Version
	VersionsErr  string
	// Why is the time the "Why?" panel asks about (?why=), Explained its
	// answer, WhyErr what kept it from one.
	Why       string
	Explained *easyjob.Explanation
	WhyErr    string
}

type policy struct{ Name, Value string }

// treeNode is one task of the chain, with its children in order.
type treeNode struct {
	Row      taskRow
	Current  bool
	Children []*treeNode
}

// runRow is one run as the history shows it.
type runRow struct {
	easyjob.ExecutionInfo
	Node string
	Lag  time.Duration
}

func (h *site) task(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := q.Get("name")
	s, err := h.snapshot(r.Context())
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	chain, err := cached(r.Context(), h.cache, "chain?"+name, func(ctx context.Context) ([]TaskView, error) {
		return readChain(ctx, h.client, name)
	})
	if err != nil {
		h.readFailed(w, r, name, err)
		return
	}
	d := taskData{Snap: s, Status: q.Get("status"), Since: q.Get("since"), Statuses: historyStatuses, Sinces: sinceChoices, Help: statusHelp, Kinds: kindNotes}
	d.Tree = chainTree(chain, name, s)
	for _, t := range chain {
		if t.Name == name {
			d.Task = newTaskRow(t, s, 4)
		}
	}
	d.Policies = policies(d.Task.Name, d.Task.Options)
	f, key := h.historyFilter(&d, q.Get("before"), s.now())
	runs, err := cached(r.Context(), h.cache, "history?"+name+"&"+key, func(ctx context.Context) ([]easyjob.ExecutionInfo, error) {
		return readRuns(ctx, h.client, d.Task.ID, f)
	})
	if err != nil {
		h.unavailable(w, r, err)
		return
	}
	for _, x := range runs {
		d.Runs = append(d.Runs, runRow{ExecutionInfo: x, Node: s.nodeName(x.NodeID), Lag: max(x.StartedAt.Sub(x.ScheduledAt), 0)})
	}
	d.Charts = taskCharts(runs)
	if len(runs) == pageSize {
		d.Older = runs[len(runs)-1].ID
	}
	d.Audit, d.AuditErr = h.taskAudit(r, name)
	if d.ShowVersions = hasVersions(d.Task.TaskInfo); d.ShowVersions {
		d.Versions, d.VersionsErr = h.taskVersions(r, name)
	}
	if d.Why = q.Get("why"); d.Why != "" {
		d.Explained, d.WhyErr = h.taskExplain(r, name, d.Why, s.now())
	}
	h.render(w, r, http.StatusOK, "task", page{Title: name, Now: s.now(), Flash: flash(q.Get("done")), Data: d})
}

// historyFilter turns the page's filters into a history query and its
// cache key, dropping filter values it does not know.
func (h *site) historyFilter(d *taskData, before string, now time.Time) (easyjob.HistoryFilter, string) {
	f := easyjob.HistoryFilter{Limit: pageSize}
	if st, err := repository.ParseExecStatus(d.Status); err == nil {
		f.Status = st
	} else {
		d.Status = ""
	}
	known := false
	for _, c := range sinceChoices {
		if c.Key == d.Since && c.D > 0 {
			f.Since, known = now.Add(-c.D).Truncate(time.Second), true
		}
	}
	if !known {
		d.Since = ""
	}
	if id, err := strconv.ParseInt(before, 10, 64); err == nil && id > 0 {
		f.BeforeID, d.Before = id, id
	}
	return f, fmt.Sprintf("status=%s&since=%s&before=%d", d.Status, d.Since, d.Before)
}

// chainTree nests the chain (root first, parents before children) and
// marks the task the page is about.
func chainTree(chain []TaskView, current string, s snapshot) *treeNode {
	byName := map[string]*treeNode{}
	var root *treeNode
	for _, t := range chain {
		n := &treeNode{Row: newTaskRow(t, s, 0), Current: t.Name == current}
		byName[t.Name] = n
		if p := byName[t.Parent]; t.Parent != "" && p != nil {
			p.Children = append(p.Children, n)
		} else if root == nil {
			root = n
		}
	}
	return root
}

// policies lists the options o of task name in words, defaults named as
// such.
func policies(name string, o repository.TaskOptions) []policy {
	misfire := string(o.Misfire)
	if misfire == "" {
		misfire = string(repository.MisfireFireOnceNow) + " (default)"
	}
	if o.Misfire == repository.MisfireCatchUp {
		misfire += fmt.Sprintf(", at most %d", o.CatchUpMax)
	}
	threshold := "5s (default)"
	if o.MisfireThreshold > 0 {
		threshold = o.MisfireThreshold.String()
	}
	timeout, retries, recoverP := "none", "none", "re-run the interrupted fire (default)"
	if o.Timeout > 0 {
		timeout = o.Timeout.String()
	}
	if o.MaxRetries > 0 {
		retries = fmt.Sprintf("up to %d, backoff %s doubling", o.MaxRetries, o.RetryBackoff)
	}
	if o.Recover == repository.RecoverSkip {
		recoverP = "skip the interrupted fire"
	}
	out := []policy{
		{"misfire policy", misfire}, {"misfire threshold", threshold}, {"timeout", timeout},
		{"retries", retries}, {"on node death", recoverP},
	}
	if !o.Start.IsZero() || !o.End.IsZero() {
		window := "from " + windowEnd(o.Start, "the start") + " until " + windowEnd(o.End, "no end")
		out = append(out, policy{"window", window})
	}
	if o.PauseAfter > 0 {
		out = append(out, policy{"pause after", fmt.Sprintf("%d failed runs in a row", o.PauseAfter)})
	}
	if o.Jitter > 0 {
		out = append(out, policy{"jitter", "each cron fire delayed by up to " + o.Jitter.String() + " (the same delay on every node)"})
	}
	if o.Spread > 0 {
		out = append(out, policy{"spread", "every fire moved by " + easyjob.SpreadOffset(name, o.Spread).String() + " (its fixed offset within " + o.Spread.String() + ")"})
	}
	if o.Calendar != "" {
		out = append(out, policy{"calendar", o.Calendar + " (its fires on excluded dates are skipped)"})
	}
	out = append(out, policy{"on overlap", overlapWords(o)})
	if o.MaxFires > 0 {
		out = append(out, policy{"max fires", fmt.Sprintf("finishes after %d fires", o.MaxFires)})
	}
	if o.Broadcast {
		out = append(out, policy{"broadcast", "each fire runs once on every live node that registers the task (one run per node in the history)"})
	}
	if ps := o.Parents.List(); len(ps) > 0 && o.ShardOf == "" {
		out = append(out, policy{"after parents", "a DAG step: runs for a fire once " + strings.Join(ps, ", ") + " ran it (" + parentFailureWords(o.OnParentFailure) + ")"})
	}
	if o.Shards > 1 {
		out = append(out, policy{"shards", strconv.Itoa(o.Shards) + " shard runs per fire, after its own run splits it"})
	}
	if o.Daemon {
		out = append(out, policy{"daemon", "kept running on one node at a time: started again 1s after it returns, later after failures in a row; a peer takes it over when its node dies or stops"})
	}
	return out
}

// parentFailureWords says what a DAG step does when a parent's run of a
// fire failed.
func parentFailureWords(p repository.ParentFailure) string {
	if p == repository.ParentFailureRun {
		return "succeeded or not: EvenIfParentsFail"
	}
	return "each succeeded; a failed parent skips the fire"
}

// overlapWords says what the task's overlap policy does.
func overlapWords(o repository.TaskOptions) string {
	switch o.Overlap {
	case repository.OverlapSkip:
		return "skip: fires due while a run runs are dropped"
	case repository.OverlapBufferOne:
		return "buffer one: the first fire due while a run runs starts once it ends"
	case repository.OverlapBufferAll:
		return "buffer all: every fire due while a run runs starts after it, in turn"
	case repository.OverlapCancel:
		return "cancel: the next fire cancels the running job, then starts"
	case repository.OverlapTerminate:
		grace := o.OverlapGrace
		if grace <= 0 {
			grace = repository.DefaultOverlapGrace
		}
		return "terminate: the next fire cancels the running job and starts at most " + grace.String() + " later"
	case repository.OverlapAllowAll:
		limit := o.OverlapLimit
		if limit <= 0 {
			limit = repository.DefaultOverlapLimit
		}
		return "allow all: every fire starts at its time, at most " + strconv.Itoa(limit) + " runs at once; a fire due at the limit is skipped"
	}
	return "wait (default): a fire due while a run runs waits for it, then the misfire policy applies"
}

// windowEnd names one side of a window: its time, or open if zero.
func windowEnd(t time.Time, open string) string {
	if t.IsZero() {
		return open
	}
	return t.UTC().Format(time.RFC3339)
}

// flash says what an action did, after its redirect.
func flash(done string) string {
	switch done {
	case "trigger":
		return "Triggered: it runs once as soon as possible (right after a running fire, if any)."
	case "pause":
		return "Paused: no further fires (a running fire completes first)."
	case "resume":
		return "Resumed: it fires again on its schedule."
	case "reschedule":
		return "Rescheduled: the new cron applies from the next fire not yet claimed."
	case "create":
		return "Created: every live node that registers its handler picks it up within a poll."
	case "update":
		return "Updated: the new definition applies from the next fire not yet claimed (a running fire completes with the one it started with)."
	}
	return ""
}
