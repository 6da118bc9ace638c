package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// historyFlags is the setup of history: --limit, --before, --status;
// --dag and --fire show one fire of the task's DAG instead.
func historyFlags(fs *flag.FlagSet) action {
	limit := fs.Int("limit", 20, "how many runs to show (at most 1000)")
	before := fs.Int64("before", 0, "show runs with an id below this (the next page)")
	status := fs.String("status", "", "only runs with this status: running, succeeded, failed, timed_out, abandoned, fenced, skipped")
	dag := fs.Bool("dag", false, "show the newest fire of the task's DAG instead: every task joined to it by Parents, Parent or Shards, parents first, with its runs of the fire")
	fire := fs.String("fire", "", "with --dag (implied): that fire, its scheduled time as history prints it (2026-01-02 15:04:05.000, UTC) or RFC 3339")
	return func(ctx context.Context, e *env, args []string) error {
		if *dag || *fire != "" {
			if isSet(fs, "limit") || isSet(fs, "before") || isSet(fs, "status") {
				return usagef("--dag and --fire show one fire: --limit, --before and --status do not apply")
			}
			return fireGraph(ctx, e, args[0], *fire)
		}
		if *limit < 1 || *limit > 1000 {
			return usagef("--limit must be between 1 and 1000 (got %d)", *limit)
		}
		if *before < 0 {
			return usagef("--before must be a run id (got %d)", *before)
		}
		f := easyjob.HistoryFilter{Limit: *limit, BeforeID: *before}
		if *status != "" {
			st, err := repository.ParseExecStatus(*status)
			if err != nil {
				return usagef("--status %q: want running, succeeded, failed, timed_out, abandoned, fenced or skipped", *status)
			}
			f.Status = st
		}
		runs, err := e.client.History(ctx, args[0], f)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(nonNil(runs))
		}
		now, err := e.client.Now(ctx)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			fmt.Fprintf(e.out, "no runs of %q\n", args[0])
			return nil
		}
		// ARGS only when a run of the page has arguments (a schedule
		// created at runtime, or a trigger --args): --json has them in full.
		withArgs := false
		for _, r := range runs {
			withArgs = withArgs || len(r.Args) > 0
		}
		header := []string{"ID", "STATUS", "KIND", "SCHEDULED", "STARTED", "TOOK", "NODE", "ATTEMPT", "ERROR"}
		if withArgs {
			header = slices.Insert(header, len(header)-1, "ARGS")
		}
		t := newTable(e.out, header...)
		for _, r := range runs {
			took := tookCell(r, now)
			// KIND is "-" for a run recorded before runs had kinds.
			cells := []string{strconv.FormatInt(r.ID, 10), string(r.Status), string(r.Kind), r.ScheduledAt.Format("2006-01-02 15:04:05.000"),
				relTime(r.StartedAt, now), took, strconv.FormatInt(r.NodeID, 10), strconv.Itoa(r.Attempt)}
			if withArgs {
				cells = append(cells, truncate(compactJSON(r.Args), 40))
			}
			t.row(append(cells, truncate(oneLine(r.Error), 60))...)
		}
		t.flush()
		if len(runs) == *limit {
			fmt.Fprintf(e.out, "more: --before %d\n", runs[len(runs)-1].ID)
		}
		return nil
	}
}

// tookCell is how long run r took, or has been running at now.
func tookCell(r easyjob.ExecutionInfo, now time.Time) string {
	switch {
	case r.Status == repository.ExecRunning:
		return "running " + shortDuration(now.Sub(r.StartedAt))
	case !r.FinishedAt.IsZero():
		return shortDuration(r.Duration())
	}
	return "-"
}

// fireLayouts are the forms --fire takes: as history prints a scheduled
// time (UTC), then RFC 3339.
var fireLayouts = []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano}

// fireGraph prints one fire of the DAG of task name (history --dag): a
// line per run of each task, parents first, a sharded task's shards and
// a task's chain steps under it, with the parents each waited for.
func fireGraph(ctx context.Context, e *env, name, fire string) error {
	var at time.Time
	if fire != "" {
		var err error
		for _, layout := range fireLayouts {
			if at, err = time.ParseInLocation(layout, fire, time.UTC); err == nil {
				break
			}
		}
		if err != nil {
			return usagef("--fire %q: want a fire's scheduled time as history prints it (2026-01-02 15:04:05.000, UTC) or RFC 3339", fire)
		}
	}
	g, err := e.client.FireGraph(ctx, name, at)
	if err != nil {
		return err
	}
	if e.json {
		for i := range g.Steps {
			g.Steps[i].Runs = nonNil(g.Steps[i].Runs)
		}
		return e.emit(g)
	}
	if g.Fire.IsZero() {
		fmt.Fprintf(e.out, "no fire of the DAG of %q yet\n", name)
		return nil
	}
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "fire %s UTC of the DAG of %s: %d tasks\n", g.Fire.UTC().Format("2006-01-02 15:04:05.000"), name, len(g.Steps))
	t := newTable(e.out, "TASK", "RUN", "STATUS", "KIND", "NODE", "STARTED", "FINISHED", "TOOK", "AFTER", "ERROR")
	shards := map[string]int{}
	for _, s := range g.Steps {
		shards[s.Task] = s.Shards
	}
	// row writes one line, the task's name indented by depth (the
	// table's cells lose leading spaces).
	row := func(depth int, task string, r *easyjob.ExecutionInfo, after string) {
		cells := []string{"", "no run", "", "", "", "", "", after, ""}
		if r != nil {
			cells = []string{strconv.FormatInt(r.ID, 10), string(r.Status), string(r.Kind), strconv.FormatInt(r.NodeID, 10),
				clock(r.StartedAt), clock(r.FinishedAt), tookCell(*r, now), after, truncate(oneLine(r.Error), 50)}
		}
		for i, c := range cells {
			cells[i] = cmp.Or(oneLine(c), "-")
		}
		fmt.Fprintln(t.w, strings.Repeat("  ", depth)+task+"\t"+strings.Join(cells, "\t"))
	}
	for _, s := range g.Steps {
		after := make([]string, len(s.Parents))
		for i, p := range s.Parents {
			after[i] = p
			if n := shards[p]; n > 0 {
				after[i] = fmt.Sprintf("%s[0..%d]", p, n-1)
			}
		}
		if s.Chain != "" {
			after = append(after, s.Chain+" (chain)")
		}
		var own int
		for i := range s.Runs {
			if r := &s.Runs[i]; r.Shard == nil {
				row(s.Depth, s.Task, r, strings.Join(after, ", "))
				own++
			}
		}
		if own == 0 {
			row(s.Depth, s.Task, nil, strings.Join(after, ", "))
		}
		for sh := range s.Shards {
			name, ran := fmt.Sprintf("%s[%d]", s.Task, sh), false
			for i := range s.Runs {
				if r := &s.Runs[i]; r.Shard != nil && *r.Shard == sh {
					row(s.Depth+1, name, r, s.Task+" (split)")
					ran = true
				}
			}
			if !ran {
				row(s.Depth+1, name, nil, s.Task+" (split)")
			}
		}
	}
	t.flush()
	return nil
}

// clock is the time of day of t (store clock, UTC) to the millisecond,
// "" for the zero time.
func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("15:04:05.000")
}
