package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// controlFlags is the setup of trigger, pause and resume (op): trigger
// takes --args; pause and resume no flags of their own.
func controlFlags(op string) func(fs *flag.FlagSet) action {
	return func(fs *flag.FlagSet) action {
		var runArgs *string
		if op == "trigger" {
			runArgs = fs.String("args", "", "run this fire with these JSON arguments (e.g. '{\"n\":2}') instead of the schedule's, checked against the handler's argument type")
		}
		return func(ctx context.Context, e *env, args []string) error {
			name := args[0]
			var t easyjob.TaskInfo
			var err error
			var withArgs string // the trigger's own arguments, for the reply
			switch op {
			case "trigger":
				var opts []easyjob.TriggerOption
				if runArgs != nil && isSet(fs, "args") {
					opts = append(opts, easyjob.WithArgs(json.RawMessage(*runArgs)))
					if withArgs = compactJSON(json.RawMessage(*runArgs)); withArgs == "null" {
						withArgs = "" // none: the schedule's own
					}
				}
				t, err = e.client.Trigger(ctx, name, opts...)
			case "pause":
				t, err = e.client.Pause(ctx, name)
			case "resume":
				t, err = e.client.Resume(ctx, name)
			}
			if err != nil {
				return err
			}
			if withArgs != "" && !e.json {
				return e.replyLine(ctx, op, t, "; the fire runs with args "+withArgs)
			}
			return e.reply(ctx, op, t)
		}
	}
}

// reply prints the row an operator action op wrote: JSON, or one line.
func (e *env) reply(ctx context.Context, op string, t easyjob.TaskInfo) error {
	if e.json {
		return e.emit(t)
	}
	return e.replyLine(ctx, op, t, "")
}

// replyLine prints the line describe says about op, then more.
func (e *env) replyLine(ctx context.Context, op string, t easyjob.TaskInfo, more string) error {
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.out, describe(op, t, now)+more)
	return err
}

// describe says in one line what an operator action did.
func describe(op string, t easyjob.TaskInfo, now time.Time) string {
	next := relTime(t.NextStartTime, now)
	switch op {
	case "trigger":
		switch {
		case t.TriggerRequested:
			return fmt.Sprintf("triggered %q: a fire is running on node %d; it runs once more right after it", t.Name, t.NodeID)
		case t.Paused:
			return fmt.Sprintf("triggered %q: runs once %s, then stays paused", t.Name, next)
		default:
			return fmt.Sprintf("triggered %q: runs %s", t.Name, next)
		}
	case "pause":
		if t.Status == repository.TaskDoing {
			return fmt.Sprintf("paused %q: the fire on node %d completes, then the task stays paused", t.Name, t.NodeID)
		}
		return fmt.Sprintf("paused %q", t.Name)
	case "resume":
		if t.Status == repository.TaskDoing {
			return fmt.Sprintf("resumed %q: a fire is running on node %d", t.Name, t.NodeID)
		}
		if t.Status == repository.TaskFinished {
			return fmt.Sprintf("resumed %q: it has no further fire time", t.Name)
		}
		return fmt.Sprintf("resumed %q: next fire %s", t.Name, next)
	case "reschedule":
		msg := fmt.Sprintf("rescheduled %q to %q: next fire %s (%s)", t.Name, t.Cron, next, t.NextStartTime.Format(time.RFC3339))
		if t.Status == repository.TaskDoing {
			msg += fmt.Sprintf("; the fire claimed by node %d runs first", t.NodeID)
		}
		if t.Paused {
			msg += "; the task is paused"
		}
		if t.Overridden {
			msg += fmt.Sprintf("; this overrides the code's %q until the code registers another cron or 'easyjob reschedule %s --reset'", t.CodeCron, t.Name)
		} else {
			msg += "; the code's cron"
		}
		return msg
	}
	return t.Name
}
