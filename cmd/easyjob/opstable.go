package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// opTable writes aligned columns; call row for each line, then flush.
type opTable struct{ w *tabwriter.Writer }

func newOpTable(out io.Writer, header ...string) *opTable {
	t := &opTable{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *opTable) row(cells ...string) {
	for i, c := range cells {
		cells[i] = opOneLine(c)
		if cells[i] == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *opTable) flush() { _ = t.w.Flush() }

// opOneLine keeps a cell (or an error message) on one line without tabs.
func opOneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// opTruncate shortens s to n runes, marking the cut with "…".
func opTruncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// opRelTime says when t is relative to now (both store clock): "3s ago",
// "in 2m", "now" within a second, "-" for the zero time.
func opRelTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d > 0:
		return opShortDuration(d) + " ago"
	default:
		return "in " + opShortDuration(-d)
	}
}

// opShortDuration prints d with at most two units, rounded: 45s, 2m5s,
// 3h4m, 2d3h; below a second in milliseconds.
func opShortDuration(d time.Duration) string {
	if d < 0 {
		return "-" + opShortDuration(-d)
	}
	const day = 24 * time.Hour
	// Round to the precision printed: 59.8s is "1m", 59m59.8s is "1h".
	switch {
	case d >= day:
		d = d.Round(time.Hour)
	case d >= time.Hour:
		d = d.Round(time.Minute)
	case d >= time.Second:
		d = d.Round(time.Second)
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return opTwoUnits(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	case d < day:
		return opTwoUnits(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	default:
		return opTwoUnits(int(d/day), "d", int(d%day/time.Hour), "h")
	}
}

func opTwoUnits(a int, ua string, b int, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}
