package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultWriteLimitTasks is the task table of the write-pattern
// measurement when neither --pgbench-tasks nor a capacity search sizes it.
const defaultWriteLimitTasks = 100000

// pgbenchOpts is bench's measurement of the write pattern's limit.
type pgbenchOpts struct {
	withCapacity bool // after --find-capacity
	only         bool // instead of a trial
	bin          string
	duration     time.Duration
	clients      int
	batch        int
	tasks        int // 0: the largest K the search held, else defaultWriteLimitTasks
}

func (p *pgbenchOpts) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&p.withCapacity, "pgbench-limit", true, "find-capacity: then measure with pgbench the fires/s the finish write pattern alone sustains on the server, and report the capacity as a share of it (skipped, saying so, without pgbench)")
	fs.BoolVar(&p.only, "pgbench-only", false, "measure only the pgbench write-pattern limit (no nodes) and print it")
	fs.StringVar(&p.bin, "pgbench", "", "pgbench binary (default: on $PATH, else "+pgbenchGlob+")")
	fs.DurationVar(&p.duration, "pgbench-duration", 10*time.Second, "pgbench limit: how long pgbench runs (whole seconds)")
	fs.IntVar(&p.clients, "pgbench-clients", 4, "pgbench limit: concurrent statements (clients), each writing its own tasks as a node would")
	fs.IntVar(&p.batch, "pgbench-batch", 500, "pgbench limit: fires per statement (the completer batches up to 500)")
	fs.IntVar(&p.tasks, "pgbench-tasks", 0, fmt.Sprintf("pgbench limit: task rows (0 = the largest K the capacity search held, else %d)", defaultWriteLimitTasks))
}

func (p *pgbenchOpts) check() error {
	if p.clients < 1 || p.batch < 1 || p.tasks < 0 || p.duration < time.Second {
		return errors.New("need --pgbench-clients >= 1, --pgbench-batch >= 1, --pgbench-tasks >= 0, --pgbench-duration >= 1s")
	}
	return nil
}

// writeLimit is what the finish write pattern alone sustains on the
// server: how many fires/s the database can record when nothing else
// (claiming, loading, running jobs, the nodes' CPU) takes a share. A
// capacity far below it is the scheduler's limit, not the database's.
type writeLimit struct {
	Pgbench          string  `json:"pgbench"` // its --version
	Clients          int     `json:"clients"`
	RowsPerStatement int     `json:"rows_per_statement"`
	Tasks            int     `json:"tasks"`
	Seconds          int     `json:"seconds"`
	StatementsPerSec float64 `json:"statements_per_sec"` // pgbench's tps: one statement per transaction
	Statements       int64   `json:"statements"`
	Failed           int64   `json:"failed_statements"`
	Rows             int64   `json:"rows_written"`  // execution rows in the table afterwards
	FiresPerSec      float64 `json:"fires_per_sec"` // statements/s × rows written per statement
	// Server-wide over pgbench's run (connections included), per row.
	WALBytesPerFire    *float64 `json:"wal_bytes_per_fire,omitempty"`
	DBCPUMicrosPerFire *float64 `json:"db_cpu_us_per_fire,omitempty"`
	Note               string   `json:"note,omitempty"`
}

// measureWriteLimit runs pgbench with pgbenchScript on a scratch database
// of adminDSN's server, migrated as the nodes' is, whose task table holds
// p.tasks rows (else sized, capacity or defaultWriteLimitTasks), claimed
// by p.clients nodes. The database is dropped on every path.
func measureWriteLimit(ctx context.Context, adminDSN string, p pgbenchOpts, sized int, quiet bool) (_ *writeLimit, err error) {
	bin, err := findPgbench(p.bin)
	if err != nil {
		return nil, err
	}
	tasks := p.tasks
	if tasks == 0 {
		tasks = sized
	}
	if tasks <= 0 {
		tasks = defaultWriteLimitTasks
	}
	perClient := max((tasks+p.clients-1)/p.clients, p.batch)
	wl := &writeLimit{Pgbench: pgbenchVersion(ctx, bin), Clients: p.clients, RowsPerStatement: p.batch,
		Tasks: perClient * p.clients, Seconds: max(int(p.duration.Round(time.Second)/time.Second), 1)}
	if !quiet {
		fmt.Fprintf(os.Stderr, "pgbench: the finish write pattern alone, %d clients × %d rows per statement on %d tasks, %d s (%s)\n",
			wl.Clients, wl.RowsPerStatement, wl.Tasks, wl.Seconds, bin)
	}
	db, err := createScratch(ctx, adminDSN)
	if err != nil {
		return nil, err
	}
	defer db.dropOnReturn(&err)
	conn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", db.name, err)
	}
	defer conn.Close(context.Background())
	if err := seedWriteLimit(ctx, conn, perClient, p.clients); err != nil {
		return nil, err
	}
	dbs := openDBSampler(ctx, adminDSN, db.name)
	defer dbs.close()
	a := dbs.sample(ctx)
	out, err := pgbenchRun{bin: bin, dsn: db.dsn, script: pgbenchScript(p.batch, perClient),
		clients: p.clients, duration: p.duration}.run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, err
	}
	b := dbs.sample(ctx)
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM easyjob_executions").Scan(&wl.Rows); err != nil {
		return nil, fmt.Errorf("count execution rows: %w", err)
	}
	wl.StatementsPerSec, wl.Statements, wl.Failed = out.TPS, out.Transactions, out.Failed
	wl.FiresPerSec, wl.Note = writeLimitRate(out, wl.Rows, p.batch)
	perRow := func(i int) *float64 {
		if wl.Rows == 0 || a.errs[i] != nil || b.errs[i] != nil {
			return nil
		}
		v := (b.vals[i] - a.vals[i]) / float64(wl.Rows)
		return &v
	}
	wl.WALBytesPerFire, wl.DBCPUMicrosPerFire = perRow(dbWAL), perRow(dbCPU)
	return wl, nil
}

// writeLimitRate is the fires/s of a pgbench run that wrote rows execution
// rows in out.Transactions statements of batch fires each: its tps times
// the rows a statement really wrote. note says why rows fall short.
func writeLimitRate(out pgbenchOutput, rows int64, batch int) (firesPerSec float64, note string) {
	if out.Transactions <= 0 {
		return 0, "pgbench processed no statement"
	}
	if want := out.Transactions * int64(batch); rows != want {
		note = fmt.Sprintf("%d rows written, %d statements × %d expected", rows, out.Transactions, batch)
	}
	return out.TPS * float64(rows) / float64(out.Transactions), note
}

// seedWriteLimit fills the task table with clients × perClient tasks,
// ids from 1, those of client c held ('doing') by node c+1, as claims
// kept across fires are.
func seedWriteLimit(ctx context.Context, conn *pgx.Conn, perClient, clients int) error {
	_, err := conn.Exec(ctx, `INSERT INTO easyjob_tasks
		(id, group_name, name, cron, code_cron, status, node_id, next_start_time, attempt)
		SELECT g, 'bench', 'pgbench-' || g, '* * * * * *', '* * * * * *', 'doing', (g - 1) / $1 + 1, now(), 1
		FROM generate_series(1, $2::bigint) g`, perClient, int64(perClient)*int64(clients))
	if err != nil {
		return fmt.Errorf("seed tasks: %w", err)
	}
	if _, err := conn.Exec(ctx, "VACUUM ANALYZE easyjob_tasks"); err != nil {
		return fmt.Errorf("vacuum tasks: %w", err)
	}
	return nil
}

// printDetail writes how the limit was measured, on one line.
func (wl *writeLimit) printDetail(w io.Writer, indent string) {
	fmt.Fprintf(w, "%s[%s: %d clients × %d fires per statement on %d tasks, %d s: %.1f statements/s, %d failed, %d rows; server-wide per fire: wal %s B, db cpu %s µs]\n",
		indent, wl.Pgbench, wl.Clients, wl.RowsPerStatement, wl.Tasks, wl.Seconds, wl.StatementsPerSec, wl.Failed, wl.Rows,
		fmtPerFire(wl.WALBytesPerFire, 0), fmtPerFire(wl.DBCPUMicrosPerFire, 1))
	if wl.Note != "" {
		fmt.Fprintf(w, "%snote: %s\n", indent, wl.Note)
	}
}

// print is bench --pgbench-only's report.
func (wl *writeLimit) print(w io.Writer) {
	fmt.Fprintf(w, "easyjob bench --pgbench-only: the finish write pattern alone sustains %.0f fires/s on this server\n", wl.FiresPerSec)
	wl.printDetail(w, "  ")
}
