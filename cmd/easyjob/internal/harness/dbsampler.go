package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The database server's cumulative counters a dbSampler reads, in the
// order of dbSample.vals.
const (
	dbCPU  = iota // CPU of every server process, µs (/proc; local server only)
	dbWAL         // WAL position, bytes
	dbStmt        // pg_stat_statements total_exec_time of the scratch database, µs
	dbMetrics
)

// dbSample is the server's counters at one instant; errs[i] says why
// vals[i] could not be read.
type dbSample struct {
	at   time.Time
	vals [dbMetrics]float64
	errs [dbMetrics]error
}

// dbSampler reads the server's counters over one connection to the
// maintenance database, kept open for the trial so that no backend is
// started inside the measured window.
type dbSampler struct {
	conn       *pgx.Conn
	database   string // the scratch database, for pg_stat_statements
	postmaster int    // 0 when the server's processes cannot be read
	cpuErr     error  // why postmaster is 0
	err        error  // why there is no connection
}

// openDBSampler connects to the server of adminDSN. It never fails: a
// sampler that could not connect or find the server's processes records
// why, and its samples say n/a.
func openDBSampler(ctx context.Context, adminDSN, database string) *dbSampler {
	s := &dbSampler{database: database}
	conn, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		s.err = fmt.Errorf("connect: %w", err)
		return s
	}
	s.conn = conn
	s.postmaster, s.cpuErr = findPostmaster(ctx, conn)
	return s
}

// close closes the connection.
func (s *dbSampler) close() {
	if s.conn != nil {
		_ = s.conn.Close(context.Background())
	}
}

// findPostmaster returns the PID of the server's postmaster when it runs
// on this machine: the parent of conn's backend, which must be a process
// named postgres (a server in a container has other PIDs).
func findPostmaster(ctx context.Context, conn *pgx.Conn) (int, error) {
	host := conn.Config().Host
	if host != "localhost" && host != "127.0.0.1" && host != "::1" && !strings.HasPrefix(host, "/") {
		return 0, fmt.Errorf("server %s is not local", host)
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, fmt.Errorf("backend pid: %w", err)
	}
	st, err := readProcStat("/proc", backend)
	if err != nil {
		return 0, fmt.Errorf("backend %d: %w", backend, err)
	}
	pm, err := readProcStat("/proc", st.PPid)
	if err != nil {
		return 0, fmt.Errorf("postmaster %d: %w", st.PPid, err)
	}
	if !strings.Contains(pm.Comm, "postgres") {
		return 0, fmt.Errorf("parent %d of backend %d is %q, not postgres (server in a container?)", st.PPid, backend, pm.Comm)
	}
	return st.PPid, nil
}

// sample reads the counters now.
func (s *dbSampler) sample(ctx context.Context) dbSample {
	d := dbSample{at: time.Now()}
	if s.err != nil {
		for i := range d.errs {
			d.errs[i] = s.err
		}
		return d
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if d.errs[dbCPU] = s.cpuErr; s.cpuErr == nil {
		ticks, err := treeCPUTicks("/proc", s.postmaster)
		d.vals[dbCPU], d.errs[dbCPU] = float64(ticks)*1e6/clockTicks, err
	}
	err := s.conn.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8").Scan(&d.vals[dbWAL])
	if err != nil {
		d.errs[dbWAL] = fmt.Errorf("wal position: %w", err)
	}
	var ms float64
	err = s.conn.QueryRow(ctx, `SELECT coalesce(sum(s.total_exec_time), 0)::float8
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1`, s.database).Scan(&ms)
	if err != nil {
		d.errs[dbStmt] = fmt.Errorf("pg_stat_statements: %w", err)
	}
	d.vals[dbStmt] = ms * 1000
	return d
}
