package storetest

import (
	"errors"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Alert rules and events (AlertStore).
var alertCases = []testCase{
	{"Rules", testAlertRules},
	{"OpenOnce", testAlertOpenOnce},
	{"OpenRace", testAlertOpenRace},
	{"Deliver", testAlertDeliver},
}

// Rules are listed by name, replaced by name (keeping their id), removed
// by name, and scoped by group.
func testAlertRules(e *env) {
	put := func(r repository.AlertRule) repository.AlertRule {
		e.t.Helper()
		got, err := e.s.PutAlertRule(e.ctx, r)
		if err != nil {
			e.t.Fatalf("PutAlertRule(%+v): %v", r, err)
		}
		return got
	}
	b := put(repository.AlertRule{Group: e.g, Name: "b", Task: "t", Kind: repository.AlertLate, After: 1500 * time.Millisecond, CreatedBy: "ann"})
	if b.ID == 0 || b.CreatedAt.IsZero() || b.After != 1500*time.Millisecond || b.Task != "t" || b.CreatedBy != "ann" {
		e.t.Fatalf("PutAlertRule returned %+v", b)
	}
	put(repository.AlertRule{Group: e.g, Name: "a", Kind: repository.AlertNodeDied})
	put(repository.AlertRule{Group: e.other(), Name: "z", Kind: repository.AlertNodeDied})
	b2 := put(repository.AlertRule{Group: e.g, Name: "b", Kind: repository.AlertConsecutiveFailures, Count: 3,
		WebhookURL: "http://example.invalid/hook", WebhookSecret: "s3cret"})
	if b2.ID != b.ID {
		e.t.Fatalf("replacing rule b changed its id: %d, was %d", b2.ID, b.ID)
	}
	rs, err := e.s.AlertRules(e.ctx, e.g)
	if err != nil || len(rs) != 2 || rs[0].Name != "a" || rs[1].Name != "b" {
		e.t.Fatalf("AlertRules = %+v, %v; want a, b", rs, err)
	}
	if r := rs[1]; r.Kind != repository.AlertConsecutiveFailures || r.Count != 3 || r.Task != "" || r.After != 0 ||
		r.WebhookURL != "http://example.invalid/hook" || r.WebhookSecret != "s3cret" {
		e.t.Fatalf("rule b after its replacement: %+v", r)
	}
	if err := e.s.RemoveAlertRule(e.ctx, e.g, "a"); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.RemoveAlertRule(e.ctx, e.g, "a"); !errors.Is(err, repository.ErrAlertRuleNotFound) {
		e.t.Fatalf("removing a rule twice = %v, want ErrAlertRuleNotFound", err)
	}
	if rs, err := e.s.AlertRules(e.ctx, e.g); err != nil || len(rs) != 1 || rs[0].Name != "b" {
		e.t.Fatalf("AlertRules after a removal = %+v, %v", rs, err)
	}
}

// An occurrence is recorded once; while an event of a rule and subject
// is open, another occurrence is counted in it, not recorded; resolving
// is done once, and the same occurrence never opens again, a new one
// does.
func testAlertOpenOnce(e *env) {
	ev := func(key string, owner repository.NodeID) repository.AlertEvent {
		return repository.AlertEvent{Group: e.g, Rule: "r", Kind: repository.AlertFailure, Subject: "t", Key: key, Message: "t failed", Owner: owner}
	}
	before := e.now()
	first, won, err := e.s.OpenAlert(e.ctx, ev("k1", 7))
	if err != nil || !won {
		e.t.Fatalf("first OpenAlert = %+v, %v, %v; want won", first, won, err)
	}
	if first.ID == 0 || !first.Open() || first.Owner != 7 || first.Count != 1 || first.Delivered || first.FiredAt.Before(before) ||
		first.Message != "t failed" || first.Kind != repository.AlertFailure {
		e.t.Fatalf("opened event: %+v", first)
	}
	if _, won, err := e.s.OpenAlert(e.ctx, ev("k1", 8)); err != nil || won {
		e.t.Fatalf("the same occurrence again: won %v, %v", won, err)
	}
	got, won, err := e.s.OpenAlert(e.ctx, ev("k2", 8))
	if err != nil || won || got.ID != first.ID || got.Count != 2 || got.Owner != 7 {
		e.t.Fatalf("another occurrence while open = %+v, won %v, %v; want event %d counted twice, owner 7", got, won, err, first.ID)
	}
	// Another subject, another group: their own events.
	if _, won, err := e.s.OpenAlert(e.ctx, repository.AlertEvent{Group: e.g, Rule: "r", Kind: repository.AlertFailure, Subject: "u", Key: "k1", Owner: 7}); err != nil || !won {
		e.t.Fatalf("another subject: won %v, %v", won, err)
	}
	if _, won, err := e.s.OpenAlert(e.ctx, repository.AlertEvent{Group: e.other(), Rule: "r", Kind: repository.AlertFailure, Subject: "t", Key: "k1", Owner: 7}); err != nil || !won {
		e.t.Fatalf("another group: won %v, %v", won, err)
	}
	res, won, err := e.s.ResolveAlert(e.ctx, e.g, "r", "t", "t succeeded")
	if err != nil || !won || res.ID != first.ID || res.Open() || res.ResolveMessage != "t succeeded" || res.Owner != 7 || res.Version <= first.Version {
		e.t.Fatalf("ResolveAlert = %+v, won %v, %v", res, won, err)
	}
	if _, won, err := e.s.ResolveAlert(e.ctx, e.g, "r", "t", "again"); err != nil || won {
		e.t.Fatalf("a second resolve: won %v, %v", won, err)
	}
	if _, won, err := e.s.OpenAlert(e.ctx, ev("k1", 8)); err != nil || won {
		e.t.Fatalf("a resolved occurrence opened again: won %v, %v", won, err)
	}
	next, won, err := e.s.OpenAlert(e.ctx, ev("k3", 8))
	if err != nil || !won || next.ID == first.ID || next.Owner != 8 {
		e.t.Fatalf("a new occurrence after the resolve = %+v, won %v, %v", next, won, err)
	}
	all, err := e.s.AlertEvents(e.ctx, e.g, repository.AlertFilter{})
	if err != nil || len(all) != 3 || all[0].ID != next.ID || all[2].ID != first.ID {
		e.t.Fatalf("AlertEvents = %+v, %v; want 3, newest first", all, err)
	}
	if page, err := e.s.AlertEvents(e.ctx, e.g, repository.AlertFilter{BeforeID: next.ID, Limit: 1}); err != nil || len(page) != 1 || page[0].ID >= next.ID {
		e.t.Fatalf("AlertEvents page = %+v, %v", page, err)
	}
}

// Of many nodes opening the same occurrence at once, one wins.
func testAlertOpenRace(e *env) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Go(func() {
			_, won, err := e.s.OpenAlert(e.ctx, repository.AlertEvent{Group: e.g, Rule: "died", Kind: repository.AlertNodeDied,
				Subject: "node 3", Key: "3", Owner: repository.NodeID(i + 1)})
			if err != nil {
				e.t.Errorf("OpenAlert: %v", err)
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		e.t.Fatalf("%d of 8 concurrent OpenAlert won, want 1", wins)
	}
}

// The owner marks deliveries; a peer takes an event over only at the
// version it read; the live filter keeps what is open or pending.
func testAlertDeliver(e *env) {
	ev, _, err := e.s.OpenAlert(e.ctx, repository.AlertEvent{Group: e.g, Rule: "r", Kind: repository.AlertDeadman, Subject: "t", Key: "k", Owner: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	live := func(want int) []repository.AlertEvent {
		e.t.Helper()
		xs, err := e.s.AlertEvents(e.ctx, e.g, repository.AlertFilter{Live: true})
		if err != nil || len(xs) != want {
			e.t.Fatalf("live events = %+v, %v; want %d", xs, err, want)
		}
		return xs
	}
	live(1)
	if _, err := e.s.MarkAlertDelivered(e.ctx, repository.AlertDelivery{ID: ev.ID, Owner: 2}); !errors.Is(err, repository.ErrClaimLost) {
		e.t.Fatalf("a delivery marked by another node = %v, want ErrClaimLost", err)
	}
	failed, err := e.s.MarkAlertDelivered(e.ctx, repository.AlertDelivery{ID: ev.ID, Owner: 1, Err: "503"})
	if err != nil || failed.Delivered || failed.Attempts != 1 || failed.LastError != "503" || failed.Version <= ev.Version {
		e.t.Fatalf("a failed delivery: %+v, %v", failed, err)
	}
	if _, err := e.s.TakeAlert(e.ctx, ev.ID, ev.Version, 2); !errors.Is(err, repository.ErrClaimLost) {
		e.t.Fatalf("TakeAlert at an old version = %v, want ErrClaimLost", err)
	}
	took, err := e.s.TakeAlert(e.ctx, ev.ID, failed.Version, 2)
	if err != nil || took.Owner != 2 || took.Version <= failed.Version {
		e.t.Fatalf("TakeAlert = %+v, %v", took, err)
	}
	if _, err := e.s.MarkAlertDelivered(e.ctx, repository.AlertDelivery{ID: ev.ID, Owner: 1}); !errors.Is(err, repository.ErrClaimLost) {
		e.t.Fatalf("the old owner's mark = %v, want ErrClaimLost", err)
	}
	done, err := e.s.MarkAlertDelivered(e.ctx, repository.AlertDelivery{ID: ev.ID, Owner: 2})
	if err != nil || !done.Delivered || done.Attempts != 0 || done.LastError != "" || done.Pending() {
		e.t.Fatalf("a delivery: %+v, %v", done, err)
	}
	live(1) // open
	if _, _, err := e.s.ResolveAlert(e.ctx, e.g, "r", "t", "ok"); err != nil {
		e.t.Fatal(err)
	}
	if xs := live(1); !xs[0].Pending() || xs[0].Owner != 2 {
		e.t.Fatalf("resolved, not delivered: %+v", xs[0])
	}
	if x, err := e.s.MarkAlertDelivered(e.ctx, repository.AlertDelivery{ID: ev.ID, Owner: 2, Resolved: true}); err != nil || !x.ResolveDelivered || x.Pending() {
		e.t.Fatalf("the resolved delivery: %+v, %v", x, err)
	}
	live(0)
	if xs, err := e.s.AlertEvents(e.ctx, e.g, repository.AlertFilter{}); err != nil || len(xs) != 1 {
		e.t.Fatalf("every event: %+v, %v", xs, err)
	}
	// Pruning keeps what is open, pending, or resolved since.
	open, _, err := e.s.OpenAlert(e.ctx, repository.AlertEvent{Group: e.g, Rule: "r", Kind: repository.AlertDeadman, Subject: "u", Key: "k", Owner: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	if k, err := e.s.PruneAlerts(e.ctx, e.g, ev.FiredAt); err != nil || k != 0 {
		e.t.Fatalf("PruneAlerts before the resolve = %d, %v", k, err)
	}
	if k, err := e.s.PruneAlerts(e.ctx, e.other(), e.now().Add(time.Second)); err != nil || k != 0 {
		e.t.Fatalf("PruneAlerts of another group = %d, %v", k, err)
	}
	if k, err := e.s.PruneAlerts(e.ctx, e.g, e.now().Add(time.Second)); err != nil || k != 1 {
		e.t.Fatalf("PruneAlerts = %d, %v; want the resolved, delivered event", k, err)
	}
	if xs, err := e.s.AlertEvents(e.ctx, e.g, repository.AlertFilter{}); err != nil || len(xs) != 1 || xs[0].ID != open.ID {
		e.t.Fatalf("after pruning: %+v, %v; want the open event only", xs, err)
	}
}
