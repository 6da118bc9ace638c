package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// historyFlags is the setup of history: --limit, --before, --status.
func historyFlags(fs *flag.FlagSet) action {
	limit := fs.Int("limit", 20, "how many runs to show (at most 1000)")
	before := fs.Int64("before", 0, "show runs with an id below this (the next page)")
	status := fs.String("status", "", "only runs with this status: running, succeeded, failed, timed_out, abandoned, fenced, skipped")
	return func(ctx context.Context, e *env, args []string) error {
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
			took := "-"
			if r.Status == repository.ExecRunning {
				took = "running " + shortDuration(now.Sub(r.StartedAt))
			} else if !r.FinishedAt.IsZero() {
				took = shortDuration(r.Duration())
			}
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
