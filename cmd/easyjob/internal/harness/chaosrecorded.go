package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// runKey names one run as both the ledger and the history know it: the
// task, its fire time (to the microsecond, the database's precision) and
// the node that ran it.
type runKey struct {
	task  string
	sched int64 // unix microseconds
	node  int64
}

// recordedRuns reads the history of the run's group: every execution row
// that records a run under its key, whatever its outcome (a fenced or
// abandoned row records a run as much as a succeeded one); a skipped row
// records a fire that did not run.
func recordedRuns(ctx context.Context, dsn, group string) (map[runKey]bool, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(qctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("read the history: %w", err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(qctx, `SELECT t.name, e.scheduled_at, e.node_id
FROM easyjob_executions e JOIN easyjob_tasks t ON t.id = e.task_id WHERE t.group_name = $1 AND e.status <> 'skipped'`, group)
	if err != nil {
		return nil, fmt.Errorf("read the history: %w", err)
	}
	defer rows.Close()
	out := map[runKey]bool{}
	for rows.Next() {
		var k runKey
		var at time.Time
		if err := rows.Scan(&k.task, &at, &k.node); err != nil {
			return nil, fmt.Errorf("read the history: %w", err)
		}
		k.sched = at.UnixMicro()
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the history: %w", err)
	}
	return out, nil
}

// killedBefore is how long before its process's SIGKILL a run may start
// and still leave no row: a run shorter than the start-record delay is
// written whole by its finish, and recovery adds an abandoned row only for
// a fire that came due before the dead node's last heartbeat.
const killedBefore = 2 * time.Second

// findUnrecorded checks that every run in the ledgers has its row in the
// history (README: every run that happened is recorded), a row that is a
// run: a skipped row at its key (a fire given back) once hid a run. A run whose
// process was SIGKILLed within killedBefore of its start could not write
// one: those are counted apart.
func (res *chaosResult) findUnrecorded(fires []fire, rows map[runKey]bool) {
	killed := map[string][]time.Time{}
	for _, f := range res.Faults {
		if f.Kind == "kill" {
			killed[f.Proc] = append(killed[f.Proc], f.At)
		}
	}
	for _, f := range fires {
		if rows[runKey{task: f.Task, sched: f.Sched / 1e3, node: f.Node}] {
			continue
		}
		start := time.Unix(0, f.Start)
		cut := false
		if f.Proc >= 0 && f.Proc < len(res.procNames) {
			for _, at := range killed[res.procNames[f.Proc]] {
				if !start.After(at) && at.Sub(start) <= killedBefore {
					cut = true
				}
			}
		}
		if cut {
			res.UnrecordedKilled++
			continue
		}
		res.Unrecorded++
		if len(res.UnrecordedDetails) < 20 {
			res.UnrecordedDetails = append(res.UnrecordedDetails, fmtFire(f, res.procName))
		}
	}
}

// unrecordedLine is the report's line about runs without a row.
func (res *chaosResult) unrecordedLine() string {
	return fmt.Sprintf("%d  (runs in the ledgers without their row in the history; + %d whose process was killed before the run could be written)",
		res.Unrecorded, res.UnrecordedKilled)
}
