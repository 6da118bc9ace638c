package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// cancelFlags is `easyjob cancel NAME [--wait]`: ask the node running the
// task's fire to cancel its job, and with --wait report how the run
// ended.
func cancelFlags(fs *flag.FlagSet) action {
	wait := fs.Bool("wait", false, "wait until the cancelled run ends (within --timeout) and print how it was recorded")
	return func(ctx context.Context, e *env, args []string) error {
		name := args[0]
		running, err := runningRuns(ctx, e.client, name)
		if err != nil {
			return err
		}
		if err := e.client.Cancel(ctx, name); err != nil {
			return err
		}
		if !*wait {
			if e.json {
				return e.emit(map[string]any{"task": name, "cancel": "requested", "runs": running})
			}
			_, err := fmt.Fprintf(e.out, "cancel of %s requested: the node running it cancels the job's context within about a second\n", name)
			return err
		}
		ended, err := awaitRuns(ctx, e.client, name, running)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(map[string]any{"task": name, "cancel": "requested", "runs": ended})
		}
		for _, x := range ended {
			line := fmt.Sprintf("%s run of %s (node %d): %s", name, x.ScheduledAt.UTC().Format(time.RFC3339), x.NodeID, x.Status)
			if x.Error != "" {
				line += ": " + x.Error
			}
			if _, err := fmt.Fprintln(e.out, line); err != nil {
				return err
			}
		}
		return nil
	}
}

// runningRuns returns the runs of task name in progress.
func runningRuns(ctx context.Context, c *easyjob.Client, name string) ([]easyjob.ExecutionInfo, error) {
	xs, err := c.History(ctx, name, easyjob.HistoryFilter{Limit: 50})
	if err != nil {
		return nil, err
	}
	var out []easyjob.ExecutionInfo
	for _, x := range xs {
		if x.Status == repository.ExecRunning {
			out = append(out, x)
		}
	}
	return out, nil
}

// awaitRuns polls until none of runs is running any more (ctx bounds it:
// --timeout) and returns them as recorded.
func awaitRuns(ctx context.Context, c *easyjob.Client, name string, runs []easyjob.ExecutionInfo) ([]easyjob.ExecutionInfo, error) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		xs, err := c.History(ctx, name, easyjob.HistoryFilter{Limit: 200})
		if err != nil {
			return nil, err
		}
		var ended []easyjob.ExecutionInfo
		for _, r := range runs {
			for _, x := range xs {
				if x.ID == r.ID && x.Status != repository.ExecRunning {
					ended = append(ended, x)
				}
			}
		}
		if len(ended) == len(runs) {
			return ended, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the cancelled run of %s still runs: %w", name, ctx.Err())
		case <-t.C:
		}
	}
}
