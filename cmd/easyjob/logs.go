package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// followEvery is how often `easyjob logs --follow` reads the run again;
// a node stores a running job's log every second.
const followEvery = 500 * time.Millisecond

// logsFlags is `easyjob logs NAME [RUN] [--follow]`: the log of a run
// (the newest, or RUN), and with --follow its lines as they come until
// the run ends.
func logsFlags(fs *flag.FlagSet) action {
	follow := fs.Bool("follow", false, "print the lines as the run writes them, until it ends (no --timeout unless given)")
	return func(ctx context.Context, e *env, args []string) error {
		name := args[0]
		var id int64
		if len(args) > 1 {
			n, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || n <= 0 {
				return usagef("RUN must be a run's id (a positive integer from easyjob history), got %q", args[1])
			}
			id = n
		}
		l, err := e.client.RunLog(ctx, name, id)
		if err != nil {
			return err
		}
		if e.json && !*follow {
			return e.emit(l)
		}
		if !e.json {
			fmt.Fprintln(e.notes, runHeader(l.Run))
		}
		printed := ""
		t := time.NewTicker(followEvery)
		defer t.Stop()
		for {
			if !e.json {
				if _, err := fmt.Fprint(e.out, newLines(printed, l.Log)); err != nil {
					return err
				}
				printed = l.Log
			}
			if !*follow || l.Run.Status != repository.ExecRunning {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("run %d of %s still runs: %w", l.Run.ID, name, ctx.Err())
			case <-t.C:
			}
			if l, err = e.client.RunLog(ctx, name, l.Run.ID); err != nil {
				return err
			}
		}
		if e.json {
			return e.emit(l)
		}
		if *follow {
			fmt.Fprintln(e.notes, "# "+runEnd(l.Run))
		}
		return nil
	}
}

// runHeader is the line naming the run whose log follows.
func runHeader(x easyjob.ExecutionInfo) string {
	kind := string(x.Kind)
	if kind == "" {
		kind = "run"
	}
	return fmt.Sprintf("# run %d of %s: %s fire of %s on node %d, attempt %d; %s",
		x.ID, x.Task, kind, x.ScheduledAt.UTC().Format(time.RFC3339), x.NodeID, x.Attempt, runEnd(x))
}

// runEnd says how the run ended, or that it runs.
func runEnd(x easyjob.ExecutionInfo) string {
	if x.Status == repository.ExecRunning {
		return "running since " + x.StartedAt.UTC().Format(time.RFC3339)
	}
	took := x.FinishedAt.Sub(x.StartedAt)
	if took >= time.Millisecond {
		took = took.Round(time.Millisecond)
	}
	s := fmt.Sprintf("%s after %v", x.Status, took)
	if x.Error != "" {
		s += ": " + x.Error
	}
	return s
}

// newLines is what of now was not printed yet: the lines after the ones
// printed that now still begins with. The last line (the count of lines
// cut past the limit) may change; it is printed again then.
func newLines(printed, now string) string {
	if strings.HasPrefix(now, printed) {
		return now[len(printed):]
	}
	common := 0
	for common < len(printed) && common < len(now) && printed[common] == now[common] {
		common++
	}
	return now[strings.LastIndexByte(now[:common], '\n')+1:]
}
