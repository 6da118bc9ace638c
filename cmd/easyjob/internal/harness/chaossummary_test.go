package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChaosSummary(t *testing.T) {
	var ds []time.Duration
	for i := range 100 {
		ds = append(ds, time.Duration(i+1)*10*time.Millisecond) // 10 ms .. 1 s
	}
	res := &chaosResult{
		Lost: 1, FailoverLost: 2, LostSteps: 3, Violations: 4, AllowedReruns: 7,
		Faults: []*fault{
			{Kind: "kill"},
			{Kind: "switchover", struck: true, resumeDs: ds[:50]},
			{Kind: "patroni-kill", struck: true, resumeDs: ds[50:]},
			{Kind: "primary-kill"}, // given up before it was issued
			{Kind: "pgbouncer-restart", resumeDs: []time.Duration{3 * time.Second}},
		},
	}
	got := res.summary("patroni")
	want := haSummary{Mode: "patroni", Faults: 3, Lost: 6, Doubled: 4, ResumeP99S: 1}
	if got != want {
		t.Fatalf("summary = %+v, want %+v", got, want)
	}
	path := filepath.Join(t.TempDir(), "sum.jsonl")
	for _, s := range []haSummary{got, {Mode: "pgbouncer", Faults: 2, ResumeP99S: 0.456}} {
		if err := appendSummary(path, s); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantText := `{"mode":"patroni","faults":3,"lost":6,"doubled":4,"resume_p99_s":1}
{"mode":"pgbouncer","faults":2,"lost":0,"doubled":0,"resume_p99_s":0.456}
`
	if string(b) != wantText {
		t.Fatalf("summary file:\n%s\nwant:\n%s", b, wantText)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || len(m) != 5 {
			t.Errorf("line %q: %v, %d keys", line, err, len(m))
		}
	}
}

func TestChaosMode(t *testing.T) {
	for _, c := range []struct {
		o    chaosOpts
		want string
	}{
		{chaosOpts{patroni: true, patroniVia: "multihost"}, "patroni"},
		{chaosOpts{patroni: true, patroniVia: "haproxy"}, "patroni-haproxy"},
		{chaosOpts{patroni: true, patroniAsync: true, patroniVia: "multihost"}, "patroni-async"},
		{chaosOpts{pgbouncer: true}, "pgbouncer"},
		{chaosOpts{clockStep: time.Second}, "clock"},
		{chaosOpts{clockStep: time.Second, clockFailover: true}, "clock-failover"},
		{chaosOpts{}, "postgres"},
	} {
		if got := chaosMode(c.o); got != c.want {
			t.Errorf("chaosMode(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	if kinds := faultKinds(chaosOpts{clockStep: time.Second, clockFailover: true}); kinds[len(kinds)-1] != "clock-failover" || !isDBOutage("clock-failover") {
		t.Errorf("--clock-failover: kinds %v", kinds)
	}
}

func TestClockStepsOfFailover(t *testing.T) {
	at := time.Unix(100, 0)
	faults := []*fault{
		{Kind: "clock-failover", At: at, Until: at.Add(time.Second), step: 5 * time.Second},
		{Kind: "clock-failover", At: at.Add(20 * time.Second)}, // failed: no step
		{Kind: "clock-failover", At: at.Add(40 * time.Second), Until: at.Add(41 * time.Second), step: -5 * time.Second},
	}
	steps := clockStepsOf(faults)
	if len(steps) != 2 || steps[0].at != at.Add(time.Second).UnixNano() || steps[0].offset != 5*time.Second || steps[1].offset != 0 {
		t.Fatalf("clock steps %+v", steps)
	}
}
