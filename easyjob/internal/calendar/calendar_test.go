package calendar

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

func TestExcludes(t *testing.T) {
	c, err := Compile(repository.Calendar{
		Name: "fr", Timezone: "Europe/Paris", Dates: []string{"2026-12-25"},
		Ranges: []repository.DateRange{{From: "2026-08-01", To: "2026-08-15"}},
		Crons:  []string{"* * * * 0,6", "0 * 12 * * *"},
	})
	if err != nil {
		t.Fatal(err)
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	for _, tc := range []struct {
		at   time.Time
		want string // the rule, "" for not excluded
	}{
		{time.Date(2026, 12, 25, 9, 0, 0, 0, paris), "date 2026-12-25"},
		{time.Date(2026, 12, 24, 23, 30, 0, 0, time.UTC), "date 2026-12-25"}, // already Christmas in Paris
		{time.Date(2026, 12, 24, 22, 30, 0, 0, time.UTC), ""},                // Thursday 23:30 in Paris
		{time.Date(2026, 8, 1, 0, 0, 0, 0, paris), "range 2026-08-01..2026-08-15"},
		{time.Date(2026, 8, 15, 23, 59, 59, 0, paris), "range 2026-08-01..2026-08-15"},
		{time.Date(2026, 8, 16, 0, 0, 0, 0, paris), "cron * * * * 0,6"}, // a Sunday
		{time.Date(2026, 11, 26, 12, 0, 30, 0, paris), ""},              // 12:00:30 is not second 0
		{time.Date(2026, 11, 26, 12, 5, 0, 0, paris), "cron 0 * 12 * * *"},
		{time.Date(2026, 11, 26, 13, 5, 0, 0, paris), ""},
	} {
		ex, rule := c.Excludes(tc.at)
		if ex != (tc.want != "") || rule != tc.want {
			t.Errorf("Excludes(%s) = %v %q, want %q", tc.at, ex, rule, tc.want)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, c := range []repository.Calendar{
		{Name: ""},
		{Name: "empty"},
		{Name: "d", Dates: []string{"25/12/2026"}},
		{Name: "r", Ranges: []repository.DateRange{{From: "2026-08-15", To: "2026-08-01"}}},
		{Name: "c", Crons: []string{"every day"}},
		{Name: "z", Timezone: "Mars/Olympus", Dates: []string{"2026-01-01"}},
	} {
		if _, err := Compile(c); !errors.Is(err, ErrInvalid) {
			t.Errorf("Compile(%+v) = %v, want ErrInvalid", c, err)
		}
	}
}

// TestSetConcurrent: a node's workers ask one set at once (-race).
func TestSetConcurrent(t *testing.T) {
	set, errs := NewSet([]repository.Calendar{{Name: "w", Crons: []string{"* * * * 0,6"}}, {Name: "bad"}})
	if errs["bad"] == nil || len(errs) != 1 || len(set) != 1 {
		t.Fatalf("NewSet: %d calendars, errors %v; want 1 and the bad one reported", len(set), errs)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := time.Date(2026, 11, 28+i%2, 10, 0, 0, 0, time.UTC) // a Saturday, a Sunday
			for range 200 {
				if ex, _ := set.Excludes("w", at); !ex {
					t.Errorf("weekend %s not excluded", at)
					return
				}
				if ex, _ := set.Excludes("gone", at); ex {
					t.Errorf("a removed calendar excluded %s", at)
					return
				}
			}
		}()
	}
	wg.Wait()
}
