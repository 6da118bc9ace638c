package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/easyjob-go/easyjob/easyjob"
)

// removeFlags is the setup of remove: --force, --drop-history.
func removeFlags(fs *flag.FlagSet) action {
	force := fs.Bool("force", false, "remove even while a live node registers the task or a fire of it is claimed (a schedule created at runtime needs none: it goes at once)")
	drop := fs.Bool("drop-history", false, "delete the task's runs too (default: kept, 'easyjob history NAME' still shows them)")
	return func(ctx context.Context, e *env, args []string) error {
		removed, err := e.client.Remove(ctx, args[0], easyjob.RemoveOptions{Force: *force, DropHistory: *drop})
		if errors.Is(err, easyjob.ErrTaskInUse) {
			return inUseError{err}
		}
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(removed)
		}
		names := make([]string, len(removed))
		for i, t := range removed {
			names[i] = t.Name
		}
		msg := fmt.Sprintf("removed %q", names[0])
		if len(names) > 1 {
			msg += fmt.Sprintf(" and its children %s", strings.Join(names[1:], ", "))
		}
		if *drop {
			msg += " with its history"
		} else {
			msg += "; its history is kept ('easyjob history " + names[0] + "')"
		}
		_, err = fmt.Fprintln(e.out, msg)
		return err
	}
}

// inUseError is a removal refused because the task is in use: exit 5.
type inUseError struct{ err error }

func (e inUseError) Error() string { return e.err.Error() + " (use --force to remove it anyway)" }

func (e inUseError) Unwrap() error { return e.err }

// rescheduleFlags is the setup of reschedule: NAME CRON, or NAME --reset.
func rescheduleFlags(fs *flag.FlagSet) action {
	reset := fs.Bool("reset", false, "end an operator's override: back to the cron the code registers")
	return func(ctx context.Context, e *env, args []string) error {
		name := args[0]
		var t easyjob.TaskInfo
		var err error
		switch {
		case *reset && len(args) > 1:
			return usagef("reschedule --reset takes NAME only (got a cron too)")
		case *reset:
			t, err = e.client.ResetSchedule(ctx, name)
		case len(args) < 2:
			return usagef("want NAME CRON or NAME --reset (see 'easyjob reschedule -h')")
		default:
			// The cron may come quoted or as separate fields.
			t, err = e.client.Reschedule(ctx, name, strings.Join(args[1:], " "))
		}
		if err != nil {
			return err
		}
		return e.reply(ctx, "reschedule", t)
	}
}
