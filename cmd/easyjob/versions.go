package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// versionsFlags is the setup of versions: no flags of its own (--json is
// every command's).
func versionsFlags(*flag.FlagSet) action {
	return func(ctx context.Context, e *env, args []string) error {
		vs, err := e.client.Versions(ctx, args[0])
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(nonNil(vs))
		}
		if len(vs) == 0 {
			// A task registered in code before its first reschedule: its
			// definition is the code's.
			_, err := fmt.Fprintf(e.out, "no versions of %q recorded (a task registered in code has one per reschedule; its code holds the rest)\n", args[0])
			return err
		}
		// Times are the store's clock: CHANGED is measured against it.
		now, err := e.client.Now(ctx)
		if err != nil {
			return err
		}
		printVersions(e, vs, now)
		return nil
	}
}

// printVersions writes the versions table, newest (the one in force)
// first.
func printVersions(e *env, vs []easyjob.Version, now time.Time) {
	t := newTable(e.out, "REV", "CHANGED", "BY", "HANDLER", "CRON", "ARGS")
	for _, v := range vs {
		changed := v.ChangedAt.UTC().Format(time.RFC3339) + " (" + relTime(v.ChangedAt, now) + ")"
		args := "-"
		if len(v.Args) > 0 {
			args = truncate(compactJSON(v.Args), 60)
		}
		t.row(strconv.FormatInt(v.Revision, 10), changed, versionBy(v.ChangedBy), v.Handler, v.Cron, args)
	}
	t.flush()
}

// versionBy names who made a change: "alice (cli from laptop)", "-" when
// nobody was recorded.
func versionBy(a easyjob.Actor) string {
	name := a.Name
	if name == "" {
		name = "-"
	}
	switch {
	case a.Via != "" && a.From != "":
		return fmt.Sprintf("%s (%s from %s)", name, a.Via, a.From)
	case a.Via != "":
		return fmt.Sprintf("%s (%s)", name, a.Via)
	}
	return name
}
