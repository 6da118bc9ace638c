package harness

import (
	"testing"
	"time"
)

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
