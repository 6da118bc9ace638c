package harness

import (
	"testing"
	"time"
)

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

// TestFindLostSteps: a root fire whose second step never ran is one lost
// step; root fires outside the window are not checked.
func TestFindLostSteps(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) int64 { return base.Add(time.Duration(s) * time.Second).UnixNano() }
	p := nodeParams{Tasks: 1, ChainDepth: 2}
	byTask := map[string][]fire{}
	for s := 1; s <= 5; s++ {
		byTask["t00000"] = append(byTask["t00000"], fire{Task: "t00000", Sched: at(s), Start: at(s)})
		byTask["t00000.s1"] = append(byTask["t00000.s1"], fire{Task: "t00000.s1", Sched: at(s), Start: at(s)})
		if s != 3 {
			byTask["t00000.s2"] = append(byTask["t00000.s2"], fire{Task: "t00000.s2", Sched: at(s), Start: at(s)})
		}
	}
	byTask["t00000"] = append(byTask["t00000"], fire{Task: "t00000", Sched: at(9), Start: at(9)}) // after the window
	res := &chaosResult{procNames: []string{"p0.0"}}
	res.findLostSteps(p, byTask, base, base.Add(8*time.Second))
	if res.ChainFires != 5 || res.LostSteps != 1 || res.LostStepDetails[0].Step != "t00000.s2" ||
		!res.LostStepDetails[0].Sched.Equal(base.Add(3*time.Second)) {
		t.Fatalf("chain fires %d, lost %d: %+v", res.ChainFires, res.LostSteps, res.LostStepDetails)
	}
}

// TestRerunAfterOutage: a run still going when a database outage began
// (started before it, or in it before its node knew) that runs again is
// an allowed re-run; one that ended before the outage began, or started
// long before it, is a violation.
func TestRerunAfterOutage(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) int64 { return base.Add(time.Duration(s * float64(time.Second))).UnixNano() }
	res := &chaosResult{procNames: []string{"p0.0", "p1.0"}}
	res.Faults = []*fault{{Kind: "silent-path", At: base.Add(20 * time.Second), idx: -1}}
	cases := []struct {
		start, end float64
		allowed    bool
	}{
		{19.5, 22, true},  // cut short by the silence
		{21, 22.1, true},  // started in the silence before its node knew
		{19, 19.8, false}, // ended before the outage: its re-run is a double
		{10, 21, false},   // started long before
	}
	for _, c := range cases {
		class, _ := res.rerunCause(fire{Task: "o", Start: at(c.start), End: at(c.end), Proc: 0})
		if got := class != ""; got != c.allowed {
			t.Errorf("run %.1f..%.1f: class %q; allowed %v, want %v", c.start, c.end, class, got, c.allowed)
		}
	}
}
