package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// latency summarises durations (milliseconds in JSON).
type latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	Min float64 `json:"min_ms"`
}

// percentile returns the nearest-rank q-quantile of sorted ds.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func summarize(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return latency{
		N: len(s), P50: ms(percentile(s, .5)), P90: ms(percentile(s, .9)), P99: ms(percentile(s, .99)),
		Max: ms(s[len(s)-1]), Min: ms(s[0]),
	}
}

func (l latency) String() string {
	if l.N == 0 {
		return "-"
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  (n=%d)", fmtMS(l.P50), fmtMS(l.P90), fmtMS(l.P99), fmtMS(l.Max), l.N)
}

func fmtMS(v float64) string {
	switch {
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.0fms", v)
	default:
		return fmt.Sprintf("%.2fms", v)
	}
}

// cronTimes lists the fire times of expr (UTC) in [from, to], at second
// precision (the finest a cron expression has).
func cronTimes(expr string, from, to time.Time) ([]time.Time, error) {
	g := gronx.New()
	if !g.IsValid(expr) {
		return nil, fmt.Errorf("invalid cron %q", expr)
	}
	fiveFields := len(strings.Fields(expr)) == 5
	var out []time.Time
	t := from.UTC().Truncate(time.Second)
	if t.Before(from) {
		t = t.Add(time.Second)
	}
	for ; !t.After(to); t = t.Add(time.Second) {
		if fiveFields && t.Second() != 0 {
			continue
		}
		due, err := g.IsDue(expr, t)
		if err != nil {
			return nil, err
		}
		if due {
			out = append(out, t)
		}
	}
	return out, nil
}

type fireKey struct {
	task  string
	sched int64
}

// dupGroup is one (task, scheduled time) run more than once.
type dupGroup struct {
	Task  string `json:"task"`
	Sched int64  `json:"scheduled_unix_nano"`
	Runs  []fire `json:"runs"`
}

// duplicates groups fires by (task, scheduled time) and returns the groups
// with more than one run, each sorted by start.
func duplicates(fires []fire) []dupGroup {
	by := map[fireKey][]fire{}
	for _, f := range fires {
		k := fireKey{f.Task, f.Sched}
		by[k] = append(by[k], f)
	}
	var out []dupGroup
	for k, fs := range by {
		if len(fs) < 2 {
			continue
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
		out = append(out, dupGroup{Task: k.task, Sched: k.sched, Runs: fs})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sched != out[j].Sched {
			return out[i].Sched < out[j].Sched
		}
		return out[i].Task < out[j].Task
	})
	return out
}

// missing is one expected fire with no ledger entry.
type missing struct {
	Task  string
	Sched time.Time
}

// steadyReport is what a window without faults must show.
type steadyReport struct {
	WindowFrom time.Time `json:"window_from"`
	WindowTo   time.Time `json:"window_to"`
	Expected   int       `json:"expected_fires"`
	Missed     int       `json:"missed_fires"`
	Lag        latency   `json:"start_lag"`
	missedList []missing
}

// analyzeSteady checks every task × fire time of the window for exactly one
// ledger entry and measures the start lag of those fires.
func analyzeSteady(fires []fire, tasks []string, expected []time.Time, from, to time.Time) steadyReport {
	r := steadyReport{WindowFrom: from, WindowTo: to, Expected: len(tasks) * len(expected)}
	seen := make(map[fireKey]bool, len(fires))
	var lags []time.Duration
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, f := range fires {
		seen[fireKey{f.Task, f.Sched}] = true
		if f.Sched >= lo && f.Sched <= hi {
			lags = append(lags, f.Lag())
		}
	}
	for _, task := range tasks {
		for _, t := range expected {
			if !seen[fireKey{task, t.UnixNano()}] {
				r.Missed++
				if len(r.missedList) < 20 {
					r.missedList = append(r.missedList, missing{task, t})
				}
			}
		}
	}
	r.Lag = summarize(lags)
	return r
}

// fmtTime prints a wall time with milliseconds.
func fmtTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

// fmtFire prints a ledger entry the way it is in the ledger file, plus
// readable times.
func fmtFire(f fire, procName func(int) string) string {
	return fmt.Sprintf("%s [ledger %q] sched %s start %s lag %s node %d proc %s",
		f.Task, strings.TrimSuffix(string(appendLine(nil, f)), "\n"), fmtTime(f.Sched), fmtTime(f.Start),
		fmtMS(ms(f.Lag())), f.Node, procName(f.Proc))
}

// table writes aligned columns.
type table struct {
	rows [][]string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = fmt.Sprint(c)
	}
	t.rows = append(t.rows, row)
}

func (t *table) write(w io.Writer, indent string) {
	widths := map[int]int{}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == len(r)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s", widths[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// progress prints a status line on stderr: rewritten in place on a
// terminal, one line per update otherwise.
type progress struct {
	quiet bool
	tty   bool
	dirty bool
}

func newProgress(quiet bool) *progress {
	p := &progress{quiet: quiet}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	return p
}

func (p *progress) printf(format string, a ...any) {
	if p.quiet {
		return
	}
	line := fmt.Sprintf(format, a...)
	if p.tty {
		fmt.Fprint(os.Stderr, "\r\033[K"+line)
		p.dirty = true
		return
	}
	fmt.Fprintln(os.Stderr, line)
}

// done ends an in-place line.
func (p *progress) done() {
	if p.tty && p.dirty {
		fmt.Fprintln(os.Stderr)
		p.dirty = false
	}
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// perFire formats calls per fire by method, largest first.
func perFire(calls map[string]int64, fires int, skip ...string) string {
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range calls {
		if v > 0 && !contains(skip, k) {
			kvs = append(kvs, kv{k, v})
		}
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].v > kvs[j].v || kvs[i].v == kvs[j].v && kvs[i].k < kvs[j].k })
	var parts []string
	for _, e := range kvs {
		if fires > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3f", e.k, float64(e.v)/float64(fires)))
		}
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
