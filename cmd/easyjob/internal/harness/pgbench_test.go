package harness

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// pgbench's summary: the tps without connection time is the limit, in
// the format of PostgreSQL 14 and later and in the older one, whose first
// tps line includes connecting.
func TestPgbenchParse(t *testing.T) {
	v15 := `pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: /tmp/easyjob-pgbench-1.sql
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 2721
number of failed transactions: 3 (0.110%)
latency average = 14.702 ms
initial connection time = 9.871 ms
tps = 272.068123 (without initial connection time)
`
	v13 := `number of transactions actually processed: 1000
latency average = 4.000 ms
tps = 249.000000 (including connections establishing)
tps = 250.500000 (excluding connections establishing)
`
	cases := []struct {
		name string
		out  string
		want pgbenchOutput
		err  bool
	}{
		{"15", v15, pgbenchOutput{TPS: 272.068123, Transactions: 2721, Failed: 3}, false},
		{"13", v13, pgbenchOutput{TPS: 250.5, Transactions: 1000}, false},
		{"bare", "tps = 12\n", pgbenchOutput{TPS: 12}, false},
		{"aborted", "pgbench: error: client 0 aborted in command 3 (SQL) of script 0\n", pgbenchOutput{}, true},
	}
	for _, c := range cases {
		got, err := parsePgbench(c.out)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v, error %v", c.name, got, err, c.want, c.err)
		}
	}
}

// The script's variables are all set (pgbench would abort a client on
// one that is not), each client's windows stay within its own tasks, and
// it writes the two tables of the finish.
func TestPgbenchScript(t *testing.T) {
	s := pgbenchScript(500, 4000)
	for _, w := range []string{
		`\set first :client_id * 4000 + random(0, 4000 - 500) + 1`,
		`\set last :first + 500 - 1`,
		"FOR NO KEY UPDATE OF c", "UPDATE easyjob_tasks t SET", "t.version = l.version", "INSERT INTO easyjob_executions",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in the script:\n%s", w, s)
		}
	}
	set := map[string]bool{"client_id": true}
	for _, m := range regexp.MustCompile(`(?m)^\\set (\w+)`).FindAllStringSubmatch(s, -1) {
		set[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?:^|[^:]):(\w+)`).FindAllStringSubmatch(s, -1) {
		if !set[m[1]] {
			t.Errorf("script uses :%s, never set", m[1])
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(s), ";") {
		t.Error("the statement does not end with ;")
	}
}

func TestPgbenchThreads(t *testing.T) {
	for _, c := range []struct{ clients, cpus, want int }{{4, 2, 2}, {4, 8, 4}, {3, 2, 1}, {6, 4, 3}, {1, 16, 1}, {4, 0, 1}} {
		if got := pgbenchThreads(c.clients, c.cpus); got != c.want {
			t.Errorf("pgbenchThreads(%d, %d) = %d, want %d", c.clients, c.cpus, got, c.want)
		}
	}
}

func TestPgbenchNewest(t *testing.T) {
	got := newestPgbench([]string{"/usr/lib/postgresql/9.6/bin/pgbench", "/usr/lib/postgresql/15/bin/pgbench", "/usr/lib/postgresql/13/bin/pgbench"})
	if got != "/usr/lib/postgresql/15/bin/pgbench" {
		t.Errorf("newest %q", got)
	}
	if newestPgbench(nil) != "" {
		t.Error("newest of none")
	}
}

// The limit counts the rows really written: a statement whose fences
// failed wrote fewer than its batch.
func TestPgbenchWriteLimitRate(t *testing.T) {
	rate, note := writeLimitRate(pgbenchOutput{TPS: 200, Transactions: 2000}, 1000000, 500)
	if rate != 100000 || note != "" {
		t.Errorf("full batches: %v %q", rate, note)
	}
	rate, note = writeLimitRate(pgbenchOutput{TPS: 200, Transactions: 2000}, 500000, 500)
	if rate != 50000 || !strings.Contains(note, "500000 rows written") {
		t.Errorf("half batches: %v %q", rate, note)
	}
	if rate, _ = writeLimitRate(pgbenchOutput{TPS: 200}, 0, 500); rate != 0 {
		t.Errorf("no statement: %v", rate)
	}
}

// pgbench's command line, which any user can read, never holds the
// password: it goes apart, to PGPASSWORD. Keys only pgx knows are
// dropped, server settings become -c options.
func TestPgbenchSplitPassword(t *testing.T) {
	cases := []struct{ dsn, conninfo, password string }{
		{"postgres://u:s3cr%40t@db:5433/bench?sslmode=disable", "postgres://u@db:5433/bench?sslmode=disable", "s3cr@t"},
		{"postgres://u@db/bench?password=s3cret&pool_max_conns=4", "postgres://u@db/bench", "s3cret"},
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", ""},
		{"postgres://u@db/bench?search_path=a%20b", "postgres://u@db/bench?options=-c+search_path%3Da%5C+b", ""},
		{"host=db user=u password='it''s' dbname=bench", "", ""}, // malformed: libpq escapes ' with \
		{`host=db user=u password='it\'s a secret' dbname=bench`, `host='db' user='u' dbname='bench'`, "it's a secret"},
		{"host=db password=plain statement_cache_capacity=0 search_path=x options='-c work_mem=1MB'",
			`host='db' options='-c work_mem=1MB -c search_path=x'`, "plain"},
	}
	for _, c := range cases {
		conninfo, password, err := splitPassword(c.dsn)
		if c.conninfo == "" {
			if err == nil {
				t.Errorf("%s: no error", c.dsn)
			} else if strings.Contains(err.Error(), "it''s") {
				t.Errorf("%s: error shows the password: %v", c.dsn, err)
			}
			continue
		}
		if err != nil || conninfo != c.conninfo || password != c.password {
			t.Errorf("%s: %q %q %v, want %q %q", c.dsn, conninfo, password, err, c.conninfo, c.password)
		}
		if c.password != "" && strings.Contains(conninfo, c.password) {
			t.Errorf("%s: conninfo %q holds the password", c.dsn, conninfo)
		}
	}
}

// The measurement runs against the schema the migrations make: a second
// of pgbench on a small table writes one execution row per fire counted.
func TestPgbenchWriteLimitRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pgbench")
	}
	if _, err := findPgbench(""); err != nil {
		t.Skip(err)
	}
	admin := pgtest.NewDatabase(t) // skips without a server; the scratch database is made next to it
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wl, err := measureWriteLimit(ctx, admin, pgbenchOpts{duration: time.Second, clients: 2, batch: 50, tasks: 1000}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if wl.Rows == 0 || wl.FiresPerSec <= 0 || wl.Note != "" || wl.Failed != 0 {
		t.Errorf("%+v", wl)
	}
	t.Logf("%.0f fires/s, %d rows in %d statements", wl.FiresPerSec, wl.Rows, wl.Statements)
}
