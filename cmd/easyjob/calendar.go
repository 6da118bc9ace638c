package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// calendarFlags is the setup of calendar: set NAME with its rules, list,
// remove NAME.
func calendarFlags(fs *flag.FlagSet) action {
	var dates, ranges, crons listFlag
	fs.Var(&dates, "date", "a whole day excluded, YYYY-MM-DD (repeat for more)")
	fs.Var(&ranges, "range", "whole days excluded, FROM..TO inclusive, e.g. 2026-08-01..2026-08-15 (repeat for more)")
	fs.Var(&crons, "cron", "exclude the times this cron matches, e.g. '* * * * 0,6' for weekends (repeat for more)")
	tz := fs.String("tz", "", "read the dates in this IANA time zone (default UTC)")
	note := fs.String("note", "", "what the calendar is for")
	return func(ctx context.Context, e *env, args []string) error {
		verb, name := args[0], ""
		if len(args) > 1 {
			name = args[1]
		}
		switch {
		case verb == "list" && name == "":
			return listCalendars(ctx, e)
		case verb == "remove" && name != "":
			if err := e.client.RemoveCalendar(ctx, name); err != nil {
				return err
			}
			_, err := fmt.Fprintf(e.out, "removed calendar %q: the tasks naming it fire on every date again\n", name)
			return err
		case verb == "set" && name != "":
			cal := easyjob.ExclusionCalendar{Name: name, Timezone: *tz, Dates: dates, Crons: crons, Note: *note}
			for _, r := range ranges {
				from, to, ok := strings.Cut(r, "..")
				if !ok {
					return usagef("--range %q: want FROM..TO, e.g. 2026-08-01..2026-08-15", r)
				}
				cal.Ranges = append(cal.Ranges, easyjob.DateRange{From: from, To: to})
			}
			out, err := e.client.SetCalendar(ctx, cal)
			if err != nil {
				return err
			}
			if e.json {
				return e.emit(out)
			}
			_, err = fmt.Fprintf(e.out, "set calendar %q: %s (every node applies it within a few seconds)\n", name, describeCalendar(out))
			return err
		}
		return usagef("want: calendar set NAME [rules], calendar list, or calendar remove NAME (got %q)", strings.Join(args, " "))
	}
}

// listCalendars prints the group's calendars.
func listCalendars(ctx context.Context, e *env) error {
	cs, err := e.client.Calendars(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.emit(nonNil(cs))
	}
	if len(cs) == 0 {
		_, err := fmt.Fprintf(e.out, "no calendars in group %q ('easyjob calendar set NAME --date ...' makes one)\n", e.group)
		return err
	}
	t := newTable(e.out, "NAME", "EXCLUDES", "UPDATED", "NOTE")
	for _, c := range cs {
		t.row(c.Name, describeCalendar(c), c.UpdatedAt.UTC().Format(time.RFC3339), c.Note)
	}
	t.flush()
	return nil
}

// describeCalendar says what c excludes, in one line.
func describeCalendar(c easyjob.ExclusionCalendar) string {
	var parts []string
	if len(c.Dates) > 0 {
		parts = append(parts, "dates "+strings.Join(c.Dates, " "))
	}
	for _, r := range c.Ranges {
		parts = append(parts, r.From+".."+r.To)
	}
	for _, x := range c.Crons {
		parts = append(parts, "cron "+x)
	}
	s := strings.Join(parts, ", ")
	if c.Timezone != "" {
		s += " (" + c.Timezone + ")"
	}
	return s
}
