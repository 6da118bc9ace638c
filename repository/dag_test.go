package repository

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPickStepFire(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	ok := func(id int64, s, attempt int) StepRun {
		return StepRun{ID: id, ScheduledAt: at(s), Attempt: attempt, Status: ExecSucceeded}
	}
	failed := func(id int64, s, attempt int) StepRun {
		return StepRun{ID: id, ScheduledAt: at(s), Attempt: attempt, Status: ExecFailed}
	}
	two := []StepParent{{Name: "b", Attempts: 1}, {Name: "c", Attempts: 2}}
	cases := []struct {
		name   string
		policy ParentFailure
		last   time.Time
		runs   map[string][]StepRun
		want   time.Time // zero: none
		in     map[string]int64
	}{
		{"both succeeded", ParentFailureSkip, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {ok(2, 5, 1)}}, at(5), map[string]int64{"b": 1, "c": 2}},
		{"one still running", ParentFailureSkip, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {{ID: 2, ScheduledAt: at(5), Attempt: 1, Status: ExecRunning}}}, time.Time{}, nil},
		{"earliest complete fire", ParentFailureSkip, t0, map[string][]StepRun{"b": {ok(1, 5, 1), ok(3, 10, 1)}, "c": {ok(2, 5, 1), ok(4, 10, 1)}}, at(5), map[string]int64{"b": 1, "c": 2}},
		{"fires up to last passed", ParentFailureSkip, at(5), map[string][]StepRun{"b": {ok(1, 5, 1), ok(3, 10, 1)}, "c": {ok(2, 5, 1), ok(4, 10, 1)}}, at(10), map[string]int64{"b": 3, "c": 4}},
		{"a failed fire is skipped", ParentFailureSkip, t0, map[string][]StepRun{"b": {ok(1, 5, 1), ok(3, 10, 1)}, "c": {failed(2, 5, 1), failed(9, 30, 2), ok(4, 10, 1)}}, at(10), map[string]int64{"b": 3, "c": 4}},
		{"a retry counts for its first attempt's fire", ParentFailureSkip, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {failed(2, 5, 1), ok(3, 7, 2)}}, at(5), map[string]int64{"b": 1, "c": 3}},
		{"run anyway waits for the last attempt", ParentFailureRun, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {failed(2, 5, 1)}}, time.Time{}, nil},
		{"run anyway after the last attempt", ParentFailureRun, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {failed(2, 5, 1), failed(3, 7, 2)}}, at(5), map[string]int64{"b": 1, "c": 3}},
		{"abandoned completes nothing", ParentFailureRun, t0, map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {{ID: 2, ScheduledAt: at(5), Attempt: 2, Status: ExecAbandoned}}}, time.Time{}, nil},
		{"a retry of a passed fire", ParentFailureSkip, at(5), map[string][]StepRun{"b": {ok(1, 5, 1)}, "c": {failed(2, 5, 1), ok(3, 7, 2)}}, time.Time{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, in, found := PickStepFire(StepAdvance{Step: "d", Parents: two, Policy: tc.policy}, tc.last, tc.runs)
			if found != !tc.want.IsZero() || !got.Equal(tc.want) {
				t.Fatalf("fire %v (%v); want %v", got, found, tc.want)
			}
			for k, v := range tc.in {
				if in[k] != v {
					t.Errorf("inputs %v; want %v", in, tc.in)
				}
			}
		})
	}
}

func TestNamesJSON(t *testing.T) {
	o := TaskOptions{Parents: NamesOf("a b", "c,d")}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"parents":["a b","c,d"]}` {
		t.Fatalf("encoded %s", b)
	}
	var back TaskOptions
	if err := json.Unmarshal(b, &back); err != nil || back != o {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, o)
	}
	if l := back.Parents.List(); len(l) != 2 || l[1] != "c,d" {
		t.Fatalf("List %q", l)
	}
}
