package harness

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

func TestPatroniYAML(t *testing.T) {
	y := patroniYAML(patroniConfig{Name: "pg2", RestPort: 8009, PGPort: 5439, EtcdHost: "127.0.0.1:2399,127.0.0.1:2401,127.0.0.1:2403", Dir: "/tmp/x/pg2", BinDir: "/usr/lib/postgresql/15/bin"})
	for _, want := range []string{
		"scope: easyjob-chaos\n", "name: pg2\n",
		"  listen: 127.0.0.1:8009\n", "  connect_address: 127.0.0.1:5439\n",
		"etcd3:\n  hosts: 127.0.0.1:2399,127.0.0.1:2401,127.0.0.1:2403\n",
		"    ttl: 10\n", "    loop_wait: 1\n", "    retry_timeout: 5\n",
		"    synchronous_mode: true\n", "      use_pg_rewind: true\n",
		"  data_dir: /tmp/x/pg2/data\n", "  bin_dir: /usr/lib/postgresql/15/bin\n",
		"    - host replication all 127.0.0.1/32 trust\n", "    - host all all 127.0.0.1/32 trust\n",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("patroni.yml lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "\t") {
		t.Error("patroni.yml has a tab: YAML indents with spaces")
	}
	if y := patroniYAML(patroniConfig{Name: "pg1", Async: true}); !strings.Contains(y, "    synchronous_mode: false\n") {
		t.Errorf("--patroni-async: patroni.yml not asynchronous:\n%s", y)
	}
}

const clusterJSON = `{"members": [
 {"name": "pg1", "role": "replica", "state": "running", "api_url": "http://127.0.0.1:8008/patroni", "host": "127.0.0.1", "port": 5433, "timeline": 2, "lag": %s},
 {"name": "pg2", "role": "leader", "state": "running", "api_url": "http://127.0.0.1:8009/patroni", "host": "127.0.0.1", "port": 5434, "timeline": 2},
 {"name": "pg3", "role": "sync_standby", "state": "running", "api_url": "http://127.0.0.1:8010/patroni", "host": "127.0.0.1", "port": 5435, "timeline": 2, "lag": 0}]}`

func TestParsePatroniCluster(t *testing.T) {
	st, err := parsePatroniCluster([]byte(strings.Replace(clusterJSON, "%s", `"unknown"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := st.leader(); !ok || l.Name != "pg2" || l.Port != 5434 {
		t.Fatalf("leader %+v %v", l, ok)
	}
	if s, ok := st.syncStandby(); !ok || s.Name != "pg3" {
		t.Fatalf("sync standby %+v %v", s, ok)
	}
	// pg1 has not replayed anything yet: not a streaming replica.
	if ok, why := st.healthy(3); ok || !strings.Contains(why, "1 of 2") {
		t.Fatalf("healthy with lag unknown: %v %q", ok, why)
	}
	st, err = parsePatroniCluster([]byte(strings.Replace(clusterJSON, "%s", "16", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := st.healthy(3); !ok {
		t.Fatalf("not healthy: %s", why)
	}
	// A replica on the old timeline (not yet rewound) does not count.
	st.Members[0].Timeline = 1
	if ok, _ := st.healthy(3); ok {
		t.Fatal("healthy with a replica on an old timeline")
	}
	st.Members[1].State = "stopped"
	if _, ok := st.leader(); ok {
		t.Fatal("a stopped leader leads")
	}
	if _, err := parsePatroniCluster([]byte("{")); err == nil {
		t.Fatal("parsed a broken answer")
	}
}

// The nodes' DSN names every member; the scratch database's DSN keeps
// the hosts and target_session_attrs.
func TestMultiHostDSN(t *testing.T) {
	dsn := multiHostDSN([]int{5433, 5434, 5435}, "postgres")
	want := "postgres://postgres@127.0.0.1:5433,127.0.0.1:5434,127.0.0.1:5435/postgres?sslmode=disable&target_session_attrs=read-write"
	if dsn != want {
		t.Fatalf("dsn %s", dsn)
	}
	scratch, err := postgres.WithDatabase(dsn, "easyjob_bench_x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(scratch, "@127.0.0.1:5433,127.0.0.1:5434,127.0.0.1:5435/easyjob_bench_x?") || !strings.Contains(scratch, "target_session_attrs=read-write") {
		t.Fatalf("scratch dsn %s", scratch)
	}
}

// The Patroni faults take their turns after kill and freeze.
func TestPatroniRotation(t *testing.T) {
	o := chaosOpts{patroni: true, warmup: time.Second, faultEvery: 10 * time.Second, restartAfter: 5 * time.Second, freezeFor: 6 * time.Second}
	if got, want := faultKinds(o), []string{"kill", "freeze", "switchover", "primary-kill", "patroni-kill", "etcd-loss"}; !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &chaosRun{o: o, end: t0.Add(80 * time.Second)}
	// Tail: 15 s of Patroni outage + 4 s recovery + 4 s: faults at 1..51 s.
	r.schedule(t0, 4*time.Second)
	var kinds []string
	for _, ev := range r.todo {
		kinds = append(kinds, ev.what)
	}
	if want := []string{"kill", "freeze", "switchover", "primary-kill", "patroni-kill", "etcd-loss"}; !slices.Equal(kinds, want) {
		t.Fatalf("schedule %v, want %v", kinds, want)
	}
}

// Per Patroni fault: resume is measured from writes accepted; a task
// that stays silent past the threshold after it is not resumed; a
// duplicate in the fault's window is charged to it.
func TestAnalyzePatroniFaults(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(s float64) int64 { return base.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	var fires []fire
	for s := 1; s <= 40; s++ {
		// Writes refused 10..12 s; t00000 is back 0.5 s after, t00001
		// only at 25 s (12 s after the writes, past the 6 s threshold).
		if s >= 10 && s <= 12 {
			continue
		}
		fires = append(fires, fire{Task: "t00000", Sched: sec(float64(s)), Start: sec(float64(s) + 0.5), Proc: 0, Node: 1})
		if s < 10 || s >= 25 {
			fires = append(fires, fire{Task: "t00001", Sched: sec(float64(s)), Start: sec(float64(s) + 0.01), Proc: 1, Node: 2})
		}
	}
	// t00000's 14 s fire twice, on two nodes: doubled during the fault.
	fires = append(fires, fire{Task: "t00000", Sched: sec(14), Start: sec(14.7), Proc: 1, Node: 2})
	f := &fault{Kind: "switchover", At: base.Add(10 * time.Second), Until: base.Add(13 * time.Second)}
	res := &chaosResult{procNames: []string{"p0.0", "p1.0"}, Faults: []*fault{f}}
	lostAfter := 6 * time.Second
	tEnd := base.Add(40 * time.Second)
	f.struck = true
	f.win = patroniWindow(f, tEnd, lostAfter)
	res.pgWindows = append(res.pgWindows, f.win)
	analyzeChaos(res, fires, nodeParams{Tasks: 2, Cron: "* * * * * *"}, base.Add(3*time.Second), base.Add(38*time.Second), lostAfter)
	if f.LostTasks != 1 || res.FailoverLost != 1 {
		t.Fatalf("not resumed %d (total %d), want 1", f.LostTasks, res.FailoverLost)
	}
	if f.Resume.N != 2 || f.Resume.Min != 500 || f.Resume.Max != 12010 {
		t.Fatalf("resume %+v", f.Resume)
	}
	if f.Doubled != 1 || f.Reruns != 0 || res.Violations != 1 {
		t.Fatalf("doubled %d reruns %d violations %d", f.Doubled, f.Reruns, res.Violations)
	}
	line, ok := res.patroniSummary("switchover")
	if !ok || !strings.Contains(line, "1 lost, 1 doubled") || !strings.Contains(line, "writes refused 3.00s") {
		t.Fatalf("summary %q", line)
	}
	if _, ok := res.patroniSummary("patroni-kill"); ok {
		t.Fatal("summary of a kind that never ran")
	}
}

// startPatroniCluster needs Patroni, etcd and PostgreSQL; it is tried
// only when EASYJOB_TEST_PATRONI is set (it takes ~10 s).
func TestPatroniClusterStartStop(t *testing.T) {
	if os.Getenv("EASYJOB_TEST_PATRONI") == "" {
		t.Skip("set EASYJOB_TEST_PATRONI=1 to start a Patroni cluster")
	}
	if err := checkPatroniTools("multihost"); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := startPatroniCluster(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := c.dir
	id, err := probeWrite(ctx, c.dsn)
	c.stop()
	if err != nil {
		t.Fatal(err)
	}
	if id.port == 0 {
		t.Fatal("no port")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left behind: %v", dir, err)
	}
}
