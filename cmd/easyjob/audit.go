package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// auditFlags is the setup of audit: --task, --limit, --before, --since.
func auditFlags(fs *flag.FlagSet) action {
	task := fs.String("task", "", "only the actions on this task (a removed task's too)")
	limit := fs.Int("limit", 20, "how many entries to show (at most 1000)")
	before := fs.Int64("before", 0, "show entries with an id below this (the next page)")
	since := fs.String("since", "", "only entries this recent: a duration (24h, 90m) or an RFC 3339 time (2026-01-02T15:04:05Z)")
	return func(ctx context.Context, e *env, _ []string) error {
		if *limit < 1 || *limit > 1000 {
			return usagef("--limit must be between 1 and 1000 (got %d)", *limit)
		}
		if *before < 0 {
			return usagef("--before must be an audit entry id (got %d)", *before)
		}
		// Entries carry the store's clock: a relative --since and the AT
		// column are measured against it, not this host's.
		now, err := e.client.Now(ctx)
		if err != nil {
			return err
		}
		f := easyjob.AuditFilter{Task: *task, BeforeID: *before, Limit: *limit}
		if *since != "" {
			if f.Since, err = parseSince("since", *since, now); err != nil {
				return err
			}
		}
		entries, err := e.client.Audit(ctx, f)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(nonNil(entries))
		}
		if len(entries) == 0 {
			what := fmt.Sprintf("group %q", e.group)
			if *task != "" {
				what = fmt.Sprintf("task %q in %s", *task, what)
			}
			_, err = fmt.Fprintf(e.out, "no audit entries for %s\n", what)
			return err
		}
		t := newTable(e.out, "ID", "AT", "ACTOR", "VIA", "FROM", "ACTION", "TASK", "DETAIL")
		for _, a := range entries {
			// Absolute (RFC 3339, as --since takes it) for the record,
			// relative for the reader.
			at := a.At.UTC().Format(time.RFC3339) + " (" + relTime(a.At, now) + ")"
			t.row(strconv.FormatInt(a.ID, 10), at, a.Name, a.Via, a.From, a.Action, a.Task, truncate(oneLine(a.Detail), 60))
		}
		t.flush()
		if len(entries) == *limit {
			fmt.Fprintf(e.out, "more: --before %d\n", entries[len(entries)-1].ID)
		}
		return nil
	}
}

// parseSince reads a time flag (--since, --at) given as a positive
// duration back from now, or an RFC 3339 time.
func parseSince(flag, s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("--%s %q: want a positive duration", flag, s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("--%s %q: want a duration ago (24h, 90m) or an RFC 3339 time (2026-01-02T15:04:05Z)", flag, s)
	}
	return t, nil
}
