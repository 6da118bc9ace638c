package harness

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"
)

// haSummary is a chaos run reduced to the line `make chaos-ha` prints per
// mode (issue 28): the database faults injected (Patroni's switchover,
// primary-kill, patroni-kill and etcd-loss, PgBouncer's restart, a PostgreSQL stop
// or restart, a silent path, a clock step), the fires lost (lost fires,
// tasks not firing again within the lost-fire threshold of the database
// accepting writes, lost chain steps), the fires run twice (duplicates
// that are not re-runs of an interrupted fire: violations of
// exactly-once) and the p99 over every task of every database fault of
// the time from the database (the new primary, or the pooler) accepting
// writes to the task's first fire.
type haSummary struct {
	Mode       string  `json:"mode"`
	Faults     int     `json:"faults"`
	Lost       int     `json:"lost"`
	Doubled    int     `json:"doubled"`
	ResumeP99S float64 `json:"resume_p99_s"`
}

// chaosMode names what a run ran on: patroni (a multi-host DSN),
// patroni-haproxy, patroni-async, pgbouncer, clock, clock-failover (a private server under libfaketime)
// or postgres (--dsn's server).
func chaosMode(o chaosOpts) string {
	switch {
	case o.patroni && o.patroniAsync:
		return "patroni-async"
	case o.patroni && o.patroniVia == "haproxy":
		return "patroni-haproxy"
	case o.patroni:
		return "patroni"
	case o.pgbouncer:
		return "pgbouncer"
	case o.clockStep > 0 && o.clockFailover:
		return "clock-failover"
	case o.clockStep > 0:
		return "clock"
	}
	return "postgres"
}

// isDBFault reports whether kind is a fault of the database or of the
// path to it, not of a node.
func isDBFault(kind string) bool {
	return isPatroniFault(kind) || isDBOutage(kind) || kind == "clock-step"
}

// summary reduces res to its haSummary; resume is the pooled p99 of
// every task's first fire after each database fault (f.resumeDs).
func (res *chaosResult) summary(mode string) haSummary {
	s := haSummary{Mode: mode, Lost: res.Lost + res.FailoverLost + res.LostSteps, Doubled: res.Violations}
	var ds []time.Duration
	for _, f := range res.Faults {
		if !isDBFault(f.Kind) || (isPatroniFault(f.Kind) && !f.struck) {
			continue
		}
		s.Faults++
		ds = append(ds, f.resumeDs...)
	}
	if l := summarize(ds); l.N > 0 {
		s.ResumeP99S = math.Round(l.P99) / 1000
	}
	return s
}

// appendSummary appends s as one JSON line to path (nothing when path is
// empty).
func appendSummary(path string, s haSummary) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--summary-file: %w", err)
	}
	return nil
}
