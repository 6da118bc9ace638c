package storetest

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var nodeCases = []testCase{
	{"RegisterNode", testRegisterNode},
	{"Heartbeat", testHeartbeat},
	{"DeleteNode", testDeleteNode},
	{"LiveNodes", testLiveNodes},
	{"ExpireNodes", testExpireNodes},
	{"Leaving", testLeaving},
	{"TaskSets", testTaskSets},
}

// A node publishes the names it registered once per distinct set and
// carries the set's id in its row, which peers read back from LiveNodes.
func testTaskSets(e *env) {
	names := []string{"b", "a", "c", "a"}
	id, err := e.s.PublishTaskSet(e.ctx, names)
	if err != nil || id != repository.TaskSetID(names) {
		e.t.Fatalf("PublishTaskSet = %q, %v; want %q", id, err, repository.TaskSetID(names))
	}
	again, err := e.s.PublishTaskSet(e.ctx, []string{"c", "b", "a"})
	if err != nil || again != id {
		e.t.Fatalf("PublishTaskSet of the same set in another order = %q, %v; want %q", again, err, id)
	}
	got, err := e.s.TaskSet(e.ctx, id)
	if err != nil || len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		e.t.Fatalf("TaskSet = %v, %v; want [a b c]", got, err)
	}
	_, err = e.s.TaskSet(e.ctx, repository.TaskSetID([]string{"never published"}))
	e.wantErr("TaskSet of an unknown id", err, repository.ErrTaskSetNotFound, "")
	n := e.node("publisher")
	n.TaskSet = id
	if _, err := e.s.Heartbeat(e.ctx, n); err != nil {
		e.t.Fatal(err)
	}
	live, err := e.s.LiveNodes(e.ctx, e.g, time.Minute)
	if err != nil || len(live) != 1 || live[0].TaskSet != id {
		e.t.Fatalf("LiveNodes after a heartbeat with a task set = %+v, %v; want task set %q", live, err, id)
	}
}

// A leaving node that still heartbeats is neither live (peers rebalance
// at once) nor dead (its running tasks are not recovered under it).
func testLeaving(e *env) {
	stay, leave := e.node("stay"), e.node("leave")
	held := e.claimed("job", leave.ID)
	leave.Leaving = true
	row, err := e.s.Heartbeat(e.ctx, leave)
	if err != nil || !row.Leaving {
		e.t.Fatalf("Heartbeat(leaving) = %+v, %v", row, err)
	}
	live, err := e.s.LiveNodes(e.ctx, e.g, time.Minute)
	if err != nil || len(live) != 1 || live[0].ID != stay.ID {
		e.t.Fatalf("LiveNodes with a leaving node = %+v, %v; want only %d", live, err, stay.ID)
	}
	orphans, err := e.s.Orphans(e.ctx, e.g, time.Minute)
	if err != nil || len(orphans) != 0 {
		e.t.Fatalf("Orphans with a leaving, heartbeating owner = %+v, %v; want none", orphans, err)
	}
	all, err := e.s.Nodes(e.ctx, e.g)
	if err != nil || len(all) != 2 {
		e.t.Fatalf("Nodes = %+v, %v", all, err)
	}
	_ = held
}

func testRegisterNode(e *env) {
	before := e.now()
	a, err := e.s.RegisterNode(e.ctx, e.g, "a:1", 1)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := e.s.RegisterNode(e.ctx, e.other(), "b:2", 3)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.s.RegisterNode(e.ctx, e.g, "c:3", 2)
	if err != nil {
		e.t.Fatal(err)
	}
	after := e.now()
	if !(a.ID > 0 && a.ID < b.ID && b.ID < c.ID) {
		e.t.Errorf("node ids %d, %d, %d: want positive and increasing with registration", a.ID, b.ID, c.ID)
	}
	for _, x := range []struct {
		n           repository.Node
		group, name string
		weight      int
	}{{a, e.g, "a:1", 1}, {b, e.other(), "b:2", 3}, {c, e.g, "c:3", 2}} {
		n := x.n
		if n.Group != x.group || n.Name != x.name || n.Weight != x.weight || n.Counts != 0 {
			e.t.Errorf("registered %+v, want group %q name %q weight %d counts 0", n, x.group, x.name, x.weight)
		}
		e.within("started_at", n.StartedAt, before, after)
		if !n.StartedAt.Equal(n.HeartbeatAt) {
			e.t.Errorf("node %d: started_at %v != heartbeat_at %v", n.ID, n.StartedAt, n.HeartbeatAt)
		}
	}
	nodes, err := e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes", nodes, a, c)
}

func testHeartbeat(e *env) {
	n := e.node("hb:1")
	e.waitPast(n.HeartbeatAt)
	before := e.now()
	n2, err := e.s.Heartbeat(e.ctx, repository.Node{ID: n.ID, Group: e.g, Name: "hb:renamed", Weight: 4, Counts: 7, StartedAt: n.StartedAt})
	if err != nil {
		e.t.Fatal(err)
	}
	after := e.now()
	if n2.ID != n.ID || n2.Group != e.g || n2.Name != "hb:renamed" || n2.Weight != 4 || n2.Counts != 7 {
		e.t.Errorf("Heartbeat returned %+v, want id %d, name, weight 4, counts 7 written", n2, n.ID)
	}
	if !n2.StartedAt.Equal(n.StartedAt) {
		e.t.Errorf("Heartbeat changed started_at %v -> %v", n.StartedAt, n2.StartedAt)
	}
	e.within("heartbeat_at", n2.HeartbeatAt, before, after)
	if !n2.HeartbeatAt.After(n.HeartbeatAt) {
		e.t.Errorf("heartbeat_at did not advance: %v -> %v", n.HeartbeatAt, n2.HeartbeatAt)
	}
	nodes, err := e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Counts != 7 || nodes[0].Weight != 4 || !nodes[0].HeartbeatAt.Equal(n2.HeartbeatAt) {
		e.t.Errorf("Nodes after Heartbeat = %+v, want the row as returned %+v", nodes, n2)
	}

	// A deleted (expired) row is re-created under the same id.
	if err := e.s.DeleteNode(e.ctx, n.ID); err != nil {
		e.t.Fatal(err)
	}
	before = e.now()
	n3, err := e.s.Heartbeat(e.ctx, repository.Node{ID: n.ID, Group: e.g, Name: "hb:back", Weight: 2, Counts: 9, StartedAt: n.StartedAt})
	if err != nil {
		e.t.Fatalf("Heartbeat of a deleted row: %v", err)
	}
	after = e.now()
	if n3.ID != n.ID || n3.Name != "hb:back" || n3.Weight != 2 || n3.Counts != 9 || n3.Group != e.g {
		e.t.Errorf("re-created row %+v, want id %d name hb:back weight 2 counts 9", n3, n.ID)
	}
	e.within("re-created heartbeat_at", n3.HeartbeatAt, before, after)
	nodes, err = e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes after re-creation", nodes, n3)
	live, err := e.s.LiveNodes(e.ctx, e.g, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("LiveNodes after re-creation", live, n3)
	// Registration after a re-creation still yields a larger id.
	if m := e.node("hb:2"); m.ID <= n3.ID {
		e.t.Errorf("RegisterNode after re-creation gave id %d <= %d", m.ID, n3.ID)
	}
}

func testDeleteNode(e *env) {
	a, b := e.node("a"), e.node("b")
	if err := e.s.DeleteNode(e.ctx, a.ID); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.DeleteNode(e.ctx, a.ID); err != nil {
		e.t.Errorf("DeleteNode of an absent row: %v, want nil", err)
	}
	nodes, err := e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes", nodes, b)
	live, err := e.s.LiveNodes(e.ctx, e.g, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("LiveNodes", live, b)
}

func testLiveNodes(e *env) {
	a, b, c := e.node("a"), e.node("b"), e.node("c")
	x := e.nodeIn(e.other(), "x")
	// Heartbeat out of id order: the answer is still ordered by id.
	for _, n := range []repository.Node{c, a, b} {
		if _, err := e.s.Heartbeat(e.ctx, n); err != nil {
			e.t.Fatal(err)
		}
	}
	live, err := e.s.LiveNodes(e.ctx, e.g, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("LiveNodes(1h)", live, a, b, c)
	for i := 1; i < len(live); i++ {
		if live[i-1].ID >= live[i].ID {
			e.t.Errorf("LiveNodes not ordered by id: %+v", live)
		}
	}

	// Only b keeps heartbeating: a and c fall silent.
	last, err := e.s.Heartbeat(e.ctx, c)
	if err != nil {
		e.t.Fatal(err)
	}
	e.waitPast(last.HeartbeatAt.Add(2 * slack))
	if _, err := e.s.Heartbeat(e.ctx, b); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.Heartbeat(e.ctx, x); err != nil {
		e.t.Fatal(err)
	}
	live, err = e.s.LiveNodes(e.ctx, e.g, slack)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("LiveNodes(slack) after a and c fell silent", live, b)
	all, err := e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes keeps silent rows", all, a, b, c)
	// A negative window puts the cutoff in the future: nobody is live.
	live, err = e.s.LiveNodes(e.ctx, e.g, -time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("LiveNodes(-1h)", live)
}

func testExpireNodes(e *env) {
	silent, holder, live := e.node("silent"), e.node("holder"), e.node("live")
	otherSilent := e.nodeIn(e.other(), "other")
	held := e.claimed("held", holder.ID)
	e.waitPast(otherSilent.HeartbeatAt.Add(2 * slack))
	if _, err := e.s.Heartbeat(e.ctx, live); err != nil {
		e.t.Fatal(err)
	}
	if n, err := e.s.ExpireNodes(e.ctx, e.g, time.Hour); err != nil || n != 0 {
		e.t.Errorf("ExpireNodes(1h) = %d, %v; want 0, nil", n, err)
	}
	n, err := e.s.ExpireNodes(e.ctx, e.g, slack)
	if err != nil {
		e.t.Fatal(err)
	}
	if n != 1 {
		e.t.Errorf("ExpireNodes = %d, want 1 (only the silent node without claims)", n)
	}
	nodes, err := e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes after ExpireNodes", nodes, holder, live)
	others, err := e.s.Nodes(e.ctx, e.other())
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("other group's Nodes", others, otherSilent)
	_ = silent

	// Once its claim is gone the silent holder expires too.
	if r, err := e.s.Release(e.ctx, []repository.Claim{held.Claim()}); err != nil || r != 1 {
		e.t.Fatalf("Release = %d, %v", r, err)
	}
	if n, err := e.s.ExpireNodes(e.ctx, e.g, slack); err != nil || n != 1 {
		e.t.Errorf("ExpireNodes after release = %d, %v; want 1, nil", n, err)
	}
	nodes, err = e.s.Nodes(e.ctx, e.g)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sameNodes("Nodes after second ExpireNodes", nodes, live)
}
