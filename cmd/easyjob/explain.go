package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// explainFlags is the setup of explain: --at asks about one fire.
func explainFlags(fs *flag.FlagSet) action {
	at := fs.String("at", "", "also explain the fire at this time: an RFC 3339 time (2026-01-02T15:04:05Z), or a duration ago (90m)")
	return func(ctx context.Context, e *env, args []string) error {
		var when time.Time
		if *at != "" {
			now, err := e.client.Now(ctx)
			if err != nil {
				return err
			}
			if when, err = parseSince("at", *at, now); err != nil {
				return err
			}
		}
		x, err := e.client.Explain(ctx, args[0], when)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(x)
		}
		printExplanation(e, x)
		return nil
	}
}

// printExplanation writes what comes for the task, then the verdict on
// the fire asked about.
func printExplanation(e *env, x easyjob.Explanation) {
	t := x.Task
	def := "cron " + orAfterParent(t.Cron)
	if t.Timezone != "" {
		def += " in " + t.Timezone
	}
	if t.Dynamic {
		def = "handler " + t.Handler + ", " + def
	}
	fmt.Fprintf(e.out, "task %s: %s, %s, revision %d\n", t.Name, def, t.Status, t.Revision)
	switch {
	case x.Blocked != "" && len(x.Next) == 0:
		fmt.Fprintf(e.out, "next fire: none on its own: %s\n", x.Blocked)
	default:
		if x.Blocked != "" {
			fmt.Fprintln(e.out, x.Blocked)
		}
		fmt.Fprintln(e.out, "next fires (UTC):")
		for _, f := range x.Next {
			fmt.Fprintf(e.out, "  %s  (%s)\n", f.UTC().Format(time.RFC3339Nano), relTime(f, x.Now))
		}
	}
	if x.Fire == nil {
		return
	}
	v := x.Fire
	fmt.Fprintf(e.out, "\nfire at %s:\n  %s\n", v.At.UTC().Format(time.RFC3339Nano), v.Verdict)
	for _, r := range v.Runs {
		line := fmt.Sprintf("  run %d: %s on node %d, attempt %d, started %s", r.ID, r.Status, r.NodeID, r.Attempt, r.StartedAt.UTC().Format(time.RFC3339Nano))
		if r.Error != "" {
			line += ", " + truncate(oneLine(r.Error), 60)
		}
		fmt.Fprintln(e.out, strings.TrimRight(line, " "))
	}
}
