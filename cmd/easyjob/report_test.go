package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := summarize(ds)
	if l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 || l.N != 100 {
		t.Fatalf("got %+v", l)
	}
	if (summarize(nil) != latency{}) {
		t.Fatal("empty summary not zero")
	}
}

func TestCronTimes(t *testing.T) {
	from := time.Date(2030, 1, 1, 0, 0, 0, 500e6, time.UTC)
	got, err := cronTimes("* * * * * *", from, from.Add(10*time.Second))
	if err != nil || len(got) != 10 || !got[0].Equal(from.Truncate(time.Second).Add(time.Second)) {
		t.Fatalf("every second: %v %v", got, err)
	}
	got, err = cronTimes("*/2 * * * *", from, from.Add(10*time.Minute))
	if err != nil || len(got) != 5 {
		t.Fatalf("every 2 minutes: %d %v", len(got), err)
	}
	if got, _ := cronTimes(idleCron, from.Add(time.Hour), from.Add(2*time.Hour)); len(got) != 0 {
		t.Fatalf("yearly: %v", got)
	}
}

func TestLedgerLineRoundTrip(t *testing.T) {
	f := fire{Task: "t00001", Sched: 1_700_000_000_000_000_000, Node: 3, Start: 1_700_000_000_004_000_000, Attempt: 1, Exec: 42, Version: 7}
	line := appendLine(nil, f)
	g, err := parseLine(line[:len(line)-1])
	if err != nil || g != f {
		t.Fatalf("%v %+v", err, g)
	}
}

func TestAnalyzeSteady(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	exp, _ := cronTimes("* * * * * *", base, base.Add(4*time.Second)) // 0..4 s: 5 times
	var fires []fire
	for _, tm := range exp {
		fires = append(fires, fire{Task: "a", Sched: tm.UnixNano(), Start: tm.UnixNano() + 2e6})
		if tm.Second() != 3 {
			fires = append(fires, fire{Task: "b", Sched: tm.UnixNano(), Start: tm.UnixNano() + 1e6})
		}
	}
	fires = append(fires, fire{Task: "a", Sched: exp[1].UnixNano(), Start: exp[1].UnixNano() + 9e6})
	r := analyzeSteady(fires, []string{"a", "b"}, exp, base, base.Add(4*time.Second))
	if r.Expected != 10 || r.Missed != 1 || r.missedList[0].Task != "b" {
		t.Fatalf("%+v", r)
	}
	d := duplicates(fires)
	if len(d) != 1 || d[0].Task != "a" || len(d[0].Runs) != 2 || d[0].Runs[0].Start > d[0].Runs[1].Start {
		t.Fatalf("%+v", d)
	}
}

func TestAnalyzeChaos(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(s float64) int64 { return base.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	var fires []fire
	// t00000 on proc 0 until it is killed at 10 s, then on proc 1 from 13.5 s.
	for s := 1; s <= 30; s++ {
		f := fire{Task: "t00000", Sched: sec(float64(s)), Start: sec(float64(s) + 0.01), Proc: 0, Node: 1}
		if s == 10 { // interrupted at 10.01, re-run after recovery: allowed
			fires = append(fires, f)
			f.Start, f.Proc, f.Node = sec(13.5), 1, 2
		} else if s > 10 {
			if s < 14 {
				continue // merged into the re-run (late fires)
			}
			f.Proc, f.Node = 1, 2
		}
		fires = append(fires, f)
	}
	// t00001 on proc 1: a duplicate with no fault (violation), and a 9 s silence (lost).
	for s := 1; s <= 30; s++ {
		if s > 12 && s < 22 {
			continue
		}
		fires = append(fires, fire{Task: "t00001", Sched: sec(float64(s)), Start: sec(float64(s) + 0.01), Proc: 1, Node: 2})
	}
	fires = append(fires, fire{Task: "t00001", Sched: sec(5), Start: sec(5.5), Proc: 2, Node: 3})
	res := &chaosResult{procNames: []string{"p0.0", "p1.0", "p2.0"}}
	res.Faults = []*fault{{Kind: "kill", At: base.Add(10020 * time.Millisecond), idx: 0}}
	analyzeChaos(res, fires, nodeParams{Tasks: 2, Cron: "* * * * * *"}, base.Add(3*time.Second), base.Add(28*time.Second), 6*time.Second)
	if res.Duplicates != 2 || res.AllowedReruns != 1 || res.Violations != 1 {
		t.Fatalf("duplicates %d allowed %d violations %d: %+v", res.Duplicates, res.AllowedReruns, res.Violations, res.DupDetails)
	}
	if res.Lost != 1 || res.LostDetails[0].Task != "t00001" {
		t.Fatalf("lost %d: %+v", res.Lost, res.LostDetails)
	}
	f := res.Faults[0]
	if f.Tasks != 1 || f.Failover.N != 1 || f.Failover.Max < 3400 || f.Failover.Max > 3600 {
		t.Fatalf("failover %+v", f)
	}
	res.pgWindows = [][2]time.Time{{base.Add(11 * time.Second), base.Add(15 * time.Second)}}
	res.Lost, res.PGDelayed, res.LostDetails = 0, 0, nil
	res.Duplicates, res.AllowedReruns, res.Violations = 0, 0, 0
	analyzeChaos(res, fires, nodeParams{Tasks: 2, Cron: "* * * * * *"}, base.Add(3*time.Second), base.Add(28*time.Second), 6*time.Second)
	if res.Lost != 0 || res.PGDelayed != 1 {
		t.Fatalf("pg window: lost %d delayed %d", res.Lost, res.PGDelayed)
	}
}
