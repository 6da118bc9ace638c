package claim

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/schedule"
	"github.com/easyjob-go/easyjob/easyjob/internal/spec"
	"github.com/easyjob-go/easyjob/repository"
)

// TestBackfillClaim: a claim of a row with a backfill fire pending runs
// that fire (its nominal time, kind backfill, attempt 1, due at once by
// the same clock offset) and keeps the row's own fire for its finish; a
// manual fire goes first; its successor predicts the row the finish
// writes.
func TestBackfillClaim(t *testing.T) {
	own := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	nominal := own.Add(-time.Hour)
	row := repository.Task{ID: 1, Version: 4, NodeID: self, Status: repository.TaskDoing, NextStartTime: own, Attempt: 2,
		FireKind: repository.RunBuffered, BackfillNext: nominal, BackfillTo: own.Add(-time.Minute)}
	sp := &spec.Spec{Name: "t"}
	local := nominal.Add(-time.Second) // the row's DueAt, on a clock a second behind
	c := New(row, sp, local, 0)
	if !c.Backfill() || !c.Task.NextStartTime.Equal(nominal) || c.Task.FireKind != repository.RunBackfill || c.Task.Attempt != 1 ||
		!c.LocalAt.Equal(local) {
		t.Fatalf("claim of a row with a backfill = %v (local %s); want the backfill fire at %s", c, c.LocalAt, nominal)
	}
	if next, kind, attempt := c.Row(); !next.Equal(own) || kind != repository.RunBuffered || attempt != 2 {
		t.Errorf("Row() = %s %s %d; want the row's own fire %s buffered 2", next, kind, attempt, own)
	}
	c.Found(own)
	if c.Misfire != "" || c.Kind != repository.RunBackfill {
		t.Errorf("a backfill fire found an hour after its time: misfire %q kind %q; want none and backfill", c.Misfire, c.Kind)
	}

	// The finish that keeps the claim for the range's next fire.
	f := repository.Finish{Keep: true, Next: own, NextAttempt: 2, NextKind: repository.RunBuffered, Backfilled: true, BackfillNext: nominal.Add(time.Minute)}
	succ := c.Successor(f, local, 0)
	if succ == nil || !succ.Backfill() || !succ.Task.NextStartTime.Equal(nominal.Add(time.Minute)) {
		t.Fatalf("successor = %v; want the next backfill fire", succ)
	}
	written := row
	written.Version++
	written.BackfillNext = nominal.Add(time.Minute)
	if !succ.predicts(written) {
		t.Errorf("successor %v does not predict the row its predecessor's finish writes: %+v", succ, written)
	}

	manual := row
	manual.FireKind = repository.RunManual
	if m := New(manual, sp, local, 0); m.Backfill() || !m.Task.NextStartTime.Equal(own) {
		t.Errorf("claim with a manual fire pending = %v; want the manual fire first", m)
	}
}

// TestBufferedPlan: a buffered fire found long after its time plans the
// cron's next fire after it, not one after the time it was found (the
// misfire policy does not apply to it).
func TestBufferedPlan(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	sched, err := schedule.Parse("* * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Name: "t", Cron: "* * * * * *", Sched: sched}
	row := repository.Task{ID: 1, Version: 1, Cron: "* * * * * *", NextStartTime: at, FireKind: repository.RunBuffered}
	c := New(row, sp, at, 0)
	c.Found(at.Add(time.Minute))
	if p := c.Plan(); c.Misfire != "" || !p.Run || !p.Next.Equal(at.Add(time.Second)) {
		t.Errorf("buffered fire found a minute late: misfire %q plan %+v; want no misfire, next %s", c.Misfire, p, at.Add(time.Second))
	}
}
