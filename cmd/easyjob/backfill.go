package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

// backfillFlags is the setup of backfill: the past range whose fires run.
func backfillFlags(fs *flag.FlagSet) action {
	from := fs.String("from", "", "start of the range (included): an RFC 3339 time, or a duration ago (90m); required")
	to := fs.String("to", "", "end of the range (included): an RFC 3339 time, or a duration ago; default now")
	return func(ctx context.Context, e *env, args []string) error {
		if *from == "" {
			return usagef("backfill needs --from (an RFC 3339 time, or a duration ago such as 1h)")
		}
		now, err := e.client.Now(ctx)
		if err != nil {
			return err
		}
		start, err := parseSince("from", *from, now)
		if err != nil {
			return err
		}
		end := now
		if *to != "" && *to != "now" {
			if end, err = parseSince("to", *to, now); err != nil {
				return err
			}
		}
		fires, err := e.client.Backfill(ctx, args[0], start, end)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(struct {
				Task  string      `json:"task"`
				Fires []time.Time `json:"fires"`
			}{args[0], fires})
		}
		fmt.Fprintf(e.out, "backfill %s: %d fires from %s to %s, run one after another (history kind backfill, each with its own time):\n",
			args[0], len(fires), fires[0].UTC().Format(time.RFC3339), fires[len(fires)-1].UTC().Format(time.RFC3339))
		for _, f := range fires {
			fmt.Fprintf(e.out, "  %s\n", f.UTC().Format(time.RFC3339Nano))
		}
		return nil
	}
}
