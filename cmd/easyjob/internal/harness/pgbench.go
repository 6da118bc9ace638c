package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// pgbenchGlob is where Debian's postgresql packages install pgbench when
// it is not on $PATH.
const pgbenchGlob = "/usr/lib/postgresql/*/bin/pgbench"

// findPgbench returns the pgbench to run: explicit if set, else the one on
// $PATH, else the newest under pgbenchGlob.
func findPgbench(explicit string) (string, error) {
	if explicit != "" {
		return exec.LookPath(explicit)
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob(pgbenchGlob)
	if p := newestPgbench(found); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("pgbench not found on $PATH nor as %s (Debian: apt-get install postgresql-client or postgresql-contrib; or pass --pgbench)", pgbenchGlob)
}

// newestPgbench returns the path of paths (from pgbenchGlob) under the
// highest major version directory, "" for none.
func newestPgbench(paths []string) string {
	version := func(p string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(p))), 64)
		return v
	}
	sorted := append([]string(nil), paths...)
	sort.SliceStable(sorted, func(i, j int) bool { return version(sorted[i]) > version(sorted[j]) })
	if len(sorted) == 0 {
		return ""
	}
	return sorted[0]
}

// pgbenchVersion returns pgbench --version's line ("pgbench (PostgreSQL) 15.2 ...").
func pgbenchVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "version unknown"
	}
	return strings.TrimSpace(string(out))
}

// pgbenchScript is the custom script of the write-pattern measurement:
// per transaction, one statement shaped like the completer's finish batch
// on a kept claim (repository/postgres/finish.go) over batch task rows,
// on the real tables of a migrated scratch database:
//
//   - lock the rows in id order, FOR NO KEY UPDATE, and test each one's
//     fence (status, node, version as read: a version check, not a
//     rejection, since pgbench cannot carry the versions it wrote);
//   - update each held row by id (the keep branch: version, last_*,
//     next_start_time, attempt; no indexed column, so HOT as in service);
//   - insert one succeeded execution row per updated task, after the same
//     start-key probe the finish makes.
//
// Client c (pgbench's :client_id, from 0) owns tasks c×perClient+1 ..
// (c+1)×perClient, as node c+1, the way nodes own disjoint claims; each
// transaction takes a random window of batch consecutive ids of its own.
// scheduled_at is the new next_start_time, unique per task row update, so
// the start key never collides.
func pgbenchScript(batch, perClient int) string {
	return fmt.Sprintf(`\set first :client_id * %[2]d + random(0, %[2]d - %[1]d) + 1
\set last :first + %[1]d - 1
\set node :client_id + 1
WITH l AS (
  SELECT c.id, c.version,
    CASE WHEN c.status = 'doing' AND c.node_id = :node THEN true ELSE false END AS held
  FROM easyjob_tasks c
  WHERE c.id BETWEEN :first AND :last
  ORDER BY c.id
  FOR NO KEY UPDATE OF c
),
u AS (
  UPDATE easyjob_tasks t SET
    version = t.version + 1,
    last_status = 'succeeded',
    last_error = '',
    last_finished_at = now(),
    updated_at = now(),
    status = 'doing',
    node_id = t.node_id,
    next_start_time = t.next_start_time + interval '1 second',
    attempt = 1,
    trigger_requested = false
  FROM l
  WHERE t.id = l.id AND l.held AND t.version = l.version
  RETURNING t.id, t.node_id, t.next_start_time
)
INSERT INTO easyjob_executions
  (task_id, parent_execution_id, node_id, scheduled_at, attempt, misfire, status, error, started_at, finished_at)
SELECT u.id, NULL, u.node_id, u.next_start_time, 1, '', 'succeeded', '', now() - interval '1 millisecond', now()
FROM u
WHERE NOT EXISTS (
  SELECT 1 FROM easyjob_executions o
  WHERE o.task_id = u.id AND o.node_id = u.node_id AND o.scheduled_at = u.next_start_time AND o.attempt = 1);
`, batch, perClient)
}

// pgbenchThreads is pgbench's -j for clients on cpus: the largest divisor
// of clients not above cpus (older pgbench wants clients a multiple of
// threads).
func pgbenchThreads(clients, cpus int) int {
	for j := min(clients, max(cpus, 1)); j > 1; j-- {
		if clients%j == 0 {
			return j
		}
	}
	return 1
}

// pgbenchOutput is what pgbench printed of a run.
type pgbenchOutput struct {
	TPS          float64 // transactions per second, without connection time
	Transactions int64   // transactions processed
	Failed       int64   // failed transactions (pgbench >= 15; else 0)
}

var (
	pgbenchTPSRe    = regexp.MustCompile(`(?m)^tps = ([0-9]+(?:\.[0-9]*)?)(?: \(([^)]*)\))?`)
	pgbenchTxRe     = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
	pgbenchFailedRe = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
)

// parsePgbench reads pgbench's summary. Of its tps lines it takes the one
// without connection time: "(without initial connection time)" since
// PostgreSQL 14, "(excluding connections establishing)" before, where
// "(including ...)" comes first.
func parsePgbench(out string) (pgbenchOutput, error) {
	var r pgbenchOutput
	ms := pgbenchTPSRe.FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		return r, errors.New("no \"tps = \" line in pgbench's output")
	}
	m := ms[0]
	for _, c := range ms {
		if !strings.HasPrefix(c[2], "including") {
			m = c
			break
		}
	}
	tps, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return r, fmt.Errorf("pgbench tps %q: %w", m[1], err)
	}
	r.TPS = tps
	if m := pgbenchTxRe.FindStringSubmatch(out); m != nil {
		r.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := pgbenchFailedRe.FindStringSubmatch(out); m != nil {
		r.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return r, nil
}

// pgbenchRun is one run of pgbench with a custom script.
type pgbenchRun struct {
	bin      string
	dsn      string // the database to run in; may hold a password
	script   string // the script's text
	clients  int
	duration time.Duration
}

// run runs pgbench and returns its parsed summary. The DSN
// goes on the command line without its password (any user can read a
// command line), the password in PGPASSWORD; the output and errors never
// show it.
func (p pgbenchRun) run(ctx context.Context) (pgbenchOutput, error) {
	conninfo, password, err := splitPassword(p.dsn)
	if err != nil {
		return pgbenchOutput{}, err
	}
	f, err := os.CreateTemp("", "easyjob-pgbench-*.sql")
	if err != nil {
		return pgbenchOutput{}, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(p.script); err != nil {
		f.Close()
		return pgbenchOutput{}, err
	}
	if err := f.Close(); err != nil {
		return pgbenchOutput{}, err
	}
	secs := max(int(p.duration.Round(time.Second)/time.Second), 1)
	args := []string{"--no-vacuum", "--protocol=prepared", "--file=" + f.Name(),
		"--client=" + strconv.Itoa(p.clients), "--jobs=" + strconv.Itoa(pgbenchThreads(p.clients, runtime.NumCPU())),
		"--time=" + strconv.Itoa(secs), conninfo}
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Env = append(os.Environ(), "PGAPPNAME=easyjob-bench-pgbench")
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	out := buf.String()
	if password != "" {
		out = strings.ReplaceAll(out, password, redactedSecret)
	}
	if err != nil {
		return pgbenchOutput{}, fmt.Errorf("pgbench: %w: %s", err, lastLines(out, 5))
	}
	return parsePgbench(out)
}

// lastLines returns the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}
