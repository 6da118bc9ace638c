package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var claimCases = []testCase{
	{"Claim", testClaim},
	{"ClaimRace", testClaimRace},
	{"Release", testRelease},
	{"HeldBy", testHeldBy},
}

func testClaim(e *env) {
	n := e.now()
	ts := e.upsert(def("t1", n), def("t2", n.Add(time.Hour)), def("stale", n), def("paused", n),
		repository.TaskDef{Name: "kid", Parent: "t1", NextStartTime: n})
	t1, t2, stale, kid := ts[0], ts[1], ts[2], ts[4]
	if _, err := e.s.Pause(e.ctx, e.g, "paused"); err != nil {
		e.t.Fatal(err)
	}
	node := e.node("n")
	if won, err := e.s.Claim(e.ctx, node.ID, nil); err != nil || won != nil {
		e.t.Errorf("Claim(no refs) = %v, %v; want nil, nil", won, err)
	}
	refs := []repository.TaskRef{
		ts[3].Ref(), // status paused
		{ID: stale.ID, Version: stale.Version + 1},
		t2.Ref(), // not due: Claim does not look at time
		t1.Ref(),
		{ID: t1.ID + 1_000_000_000, Version: 1}, // no such row
	}
	before := e.now()
	won, err := e.s.Claim(e.ctx, node.ID, refs)
	after := e.now()
	if err != nil {
		e.t.Fatal(err)
	}
	if len(won) != 2 {
		e.t.Fatalf("Claim won %v, want t1 and t2", taskIDs(won))
	}
	if won[0].ID > won[1].ID {
		e.t.Errorf("Claim result not ordered by id: %v", taskIDs(won))
	}
	for _, w := range won {
		want := t1
		if w.ID == t2.ID {
			want = t2
		}
		want.Status, want.NodeID = repository.TaskDoing, node.ID
		want.Version++
		e.within("claimed updated_at", w.UpdatedAt, before, after)
		want.UpdatedAt = w.UpdatedAt
		e.sameTask("claimed "+want.Name, w, want)
		e.sameTask("stored "+want.Name, e.task(want.Name), w)
	}
	e.sameTask("stale ref not claimed", e.task("stale"), stale)

	// The same refs again (now stale), and a second node: nothing.
	other := e.node("m")
	won, err = e.s.Claim(e.ctx, other.ID, []repository.TaskRef{t1.Ref(), t2.Ref()})
	if err != nil || len(won) != 0 {
		e.t.Errorf("second claim of the same versions = %v, %v; want none", taskIDs(won), err)
	}
	// The current version of a doing row: not pending, not claimable.
	cur := e.task("t1")
	won, err = e.s.Claim(e.ctx, other.ID, []repository.TaskRef{cur.Ref()})
	if err != nil || len(won) != 0 {
		e.t.Errorf("claim of a doing row = %v, %v; want none", taskIDs(won), err)
	}
	// Children are claimed the same way.
	e.claim(node.ID, kid)
}

// Many nodes race for the same (id, version) pairs, each in its own random
// batches: exactly one wins each pair.
func testClaimRace(e *env) {
	const racers, tasks = 50, 100
	n := e.now()
	defs := make([]repository.TaskDef, tasks)
	for i := range defs {
		defs[i] = def(fmt.Sprintf("t%03d", i), n.Add(-time.Second))
	}
	ts := e.upsert(defs...)
	orig := make(map[repository.TaskID]repository.Task, tasks)
	for _, t := range ts {
		orig[t.ID] = t
	}
	nodes := make([]repository.NodeID, racers)
	for i := range nodes {
		nodes[i] = e.node(fmt.Sprintf("racer-%d", i)).ID
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		won   = make([][]repository.Task, racers)
		errs  = make([]error, racers)
	)
	for r := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), uint64(n.UnixNano())))
			order := rng.Perm(tasks)
			<-start
			for len(order) > 0 {
				k := min(1+rng.IntN(20), len(order))
				refs := make([]repository.TaskRef, k)
				asked := make(map[repository.TaskID]bool, k)
				for i, j := range order[:k] {
					refs[i] = ts[j].Ref()
					asked[ts[j].ID] = true
				}
				order = order[k:]
				got, err := e.s.Claim(e.ctx, nodes[r], refs)
				if err != nil {
					errs[r] = err
					return
				}
				for _, g := range got {
					if !asked[g.ID] {
						errs[r] = fmt.Errorf("racer %d won task %d it did not ask for", r, g.ID)
						return
					}
				}
				won[r] = append(won[r], got...)
			}
		}()
	}
	close(start)
	wg.Wait()
	winner := make(map[repository.TaskID]repository.NodeID, tasks)
	for r := range racers {
		if errs[r] != nil {
			e.t.Errorf("racer %d: %v", r, errs[r])
		}
		for _, w := range won[r] {
			if prev, dup := winner[w.ID]; dup {
				e.t.Errorf("task %d won by nodes %d and %d", w.ID, prev, nodes[r])
			}
			winner[w.ID] = nodes[r]
			if w.NodeID != nodes[r] || w.Status != repository.TaskDoing || w.Version != orig[w.ID].Version+1 {
				e.t.Errorf("racer %d got row %+v: want doing by %d at version %d", r, w, nodes[r], orig[w.ID].Version+1)
			}
		}
	}
	if len(winner) != tasks {
		e.t.Errorf("%d of %d tasks were won, want all", len(winner), tasks)
	}
	final, err := e.s.Tasks(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, t := range final {
		if t.Status != repository.TaskDoing || t.NodeID != winner[t.ID] || t.Version != orig[t.ID].Version+1 {
			e.t.Errorf("stored row %+v: want doing by winner %d at version %d", t, winner[t.ID], orig[t.ID].Version+1)
		}
	}
}

func testRelease(e *env) {
	node, other := e.node("n"), e.node("m")
	n := e.now()
	ts := e.claim(node.ID, e.upsert(def("a", n), def("b", n), def("c", n))...)
	a, b, c := ts[0], ts[1], ts[2]
	if r, err := e.s.Release(e.ctx, nil); err != nil || r != 0 {
		e.t.Errorf("Release(nil) = %d, %v; want 0, nil", r, err)
	}
	r, err := e.s.Release(e.ctx, []repository.Claim{
		a.Claim(),
		{ID: b.ID, Version: b.Version - 1, NodeID: node.ID}, // stale version
		{ID: c.ID, Version: c.Version, NodeID: other.ID},    // another node
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if r != 1 {
		e.t.Errorf("Release = %d, want 1", r)
	}
	got := e.task("a")
	want := a
	want.Status, want.NodeID = repository.TaskPending, 0
	want.Version++
	want.UpdatedAt = got.UpdatedAt
	e.sameTask("released", got, want)
	e.sameTask("stale release", e.task("b"), b)
	e.sameTask("foreign release", e.task("c"), c)
	if r, err := e.s.Release(e.ctx, []repository.Claim{a.Claim()}); err != nil || r != 0 {
		e.t.Errorf("second Release = %d, %v; want 0, nil", r, err)
	}
	// A released task is claimable again at its new version.
	e.claim(other.ID, got)
}

func testHeldBy(e *env) {
	n1, n2 := e.node("n1"), e.node("n2")
	n := e.now()
	ts := e.upsert(def("a", n), def("b", n), def("c", n), def("free", n))
	mine := e.claim(n1.ID, ts[1], ts[0])
	e.claim(n2.ID, ts[2])
	e.claimed("elsewhere", n2.ID)
	held, err := e.s.HeldBy(e.ctx, n1.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(held) != 2 {
		e.t.Fatalf("HeldBy = %v, want a and b", taskIDs(held))
	}
	if held[0].ID > held[1].ID {
		e.t.Errorf("HeldBy not ordered by id: %v", taskIDs(held))
	}
	byID := map[repository.TaskID]repository.Task{mine[0].ID: mine[0], mine[1].ID: mine[1]}
	for _, h := range held {
		e.sameTask("held row", h, byID[h.ID])
	}
	// A finished fire is no longer held.
	a := e.task("a")
	e.finishHeld(repository.Finish{Claim: a.Claim(), Revision: a.Revision, Status: repository.ExecSucceeded, Next: n.Add(time.Minute), NextAttempt: 1, Cron: a.Cron})
	held, err = e.s.HeldBy(e.ctx, n1.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(held) != 1 || held[0].Name != "b" {
		e.t.Errorf("HeldBy after finishing a = %v, want only b", taskIDs(held))
	}
}
