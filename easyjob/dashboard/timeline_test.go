package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
)

// TestTimelineFailover: a node that died mid-run shows a crossed run, the
// peer's re-run of the same fire is ringed and linked to it, the dead
// node's last heartbeat is marked, a failure is flagged, and a node row
// that is gone still gets a lane for its runs.
func TestTimelineFailover(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 5, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	nodes := []easyjob.NodeInfo{
		{ID: 1, Name: "a", Dead: true, StartedAt: at(-600), HeartbeatAt: at(-100)},
		{ID: 2, Name: "b", Live: true, StartedAt: at(-30), HeartbeatAt: at(0)},
	}
	runs := []easyjob.ExecutionInfo{ // newest first
		{ID: 5, Task: "report", TaskID: 7, NodeID: 2, ScheduledAt: at(-102), StartedAt: at(-96), FinishedAt: at(-95), Status: repository.ExecSucceeded},
		{ID: 4, Task: "mail", TaskID: 8, NodeID: 9, ScheduledAt: at(-99), StartedAt: at(-99), FinishedAt: at(-98), Status: repository.ExecFailed},
		{ID: 3, Task: "report", TaskID: 7, NodeID: 1, ScheduledAt: at(-102), StartedAt: at(-102), FinishedAt: at(-96), Status: repository.ExecAbandoned},
		{ID: 2, Task: "report", TaskID: 7, NodeID: 1, ScheduledAt: at(-160), StartedAt: at(-160), FinishedAt: at(-159), Status: repository.ExecSucceeded},
	}
	tl := buildTimeline(nodes, runs, now, 5*time.Minute, false)
	if len(tl.Lanes) != 3 || tl.Lanes[2].Label != "9 · node 9" || tl.Lanes[2].State != "gone" {
		t.Fatalf("lanes %+v: want a, b and the gone node 9", tl.Lanes)
	}
	if len(tl.Marks) != 4 || len(tl.Links) != 1 {
		t.Fatalf("%d marks, %d links; want 4 and 1", len(tl.Marks), len(tl.Links))
	}
	byClass := map[string]mark{}
	for _, m := range tl.Marks {
		byClass[m.Class] = m
	}
	if m := byClass["run abandoned"]; m.Cross == "" {
		t.Error("the abandoned run is not crossed")
	}
	if m := byClass["run bad"]; m.Flag == "" {
		t.Error("the failed run is not flagged")
	}
	rerun := tl.Marks[3] // oldest first
	if !rerun.Ring || rerun.Y <= tl.Lanes[1].Y-1 || rerun.Y >= tl.Lanes[2].Y {
		t.Errorf("the re-run %+v: want ringed, in b's lane", rerun)
	}
	if l := tl.Links[0]; l.X1 >= l.X2 || l.Y1 >= l.Y2 {
		t.Errorf("link %+v: want from a's abandoned run down-right to b's re-run", l)
	}
	var silent, started int
	for _, e := range tl.Events {
		switch e.Class {
		case "dead":
			silent++
		case "started":
			started++
		}
	}
	if silent != 1 || started != 1 {
		t.Errorf("events %+v: want a's last heartbeat and b's start", tl.Events)
	}
	if len(tl.Ticks) < 4 || len(tl.Legend) != 2 || tl.Legend[0].Task != "report" {
		t.Errorf("ticks %d, legend %+v", len(tl.Ticks), tl.Legend)
	}
}

// TestFireStats: fires per minute count root fires of the last minute;
// lag quantiles are nearest-rank.
func TestFireStats(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	var runs []easyjob.ExecutionInfo
	for i := range 100 { // one fire a second, newest first, lag i ms
		start := now.Add(-time.Duration(i) * time.Second)
		runs = append(runs, easyjob.ExecutionInfo{ScheduledAt: start.Add(-time.Duration(i) * time.Millisecond), StartedAt: start})
		runs = append(runs, easyjob.ExecutionInfo{ParentExecutionID: 1, StartedAt: start}) // a chain step
	}
	st := computeStats(runs, now, false)
	if st.PerMinute != 60 || st.LagN != 100 || st.LagP99 != 98*time.Millisecond || st.LagP50 != 49*time.Millisecond {
		t.Errorf("stats %+v: want 60/min, 100 lags, p50 49ms, p99 98ms", st)
	}
	st = computeStats(runs[:20], now, true) // a sample of the newest 10 s
	if !st.Sampled || st.Window != 9*time.Second || st.PerMinute < 60 || st.PerMinute > 70 {
		t.Errorf("sampled stats %+v: want about 60/min over 9s", st)
	}
}

// TestTimelineChainSteps: a chain's steps run on the root's node right
// after it; each is drawn in the lane's lower band (not over the root),
// linked to the run that started it.
func TestTimelineChainSteps(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 5, 0, 0, time.UTC)
	at := func(ms int) time.Time { return now.Add(time.Duration(ms) * time.Millisecond) }
	nodes := []easyjob.NodeInfo{{ID: 1, Name: "a", Live: true, StartedAt: at(-600_000), HeartbeatAt: at(0)}}
	runs := []easyjob.ExecutionInfo{ // newest first: root → step1 → step2
		{ID: 3, Task: "step2", TaskID: 9, ParentExecutionID: 2, NodeID: 1, ScheduledAt: at(-60_000), StartedAt: at(-59_000), FinishedAt: at(-58_500), Status: repository.ExecSucceeded, Kind: easyjob.RunChain},
		{ID: 2, Task: "step1", TaskID: 8, ParentExecutionID: 1, NodeID: 1, ScheduledAt: at(-60_000), StartedAt: at(-59_500), FinishedAt: at(-59_000), Status: repository.ExecFailed, Kind: easyjob.RunChain},
		{ID: 1, Task: "root", TaskID: 7, NodeID: 1, ScheduledAt: at(-60_000), StartedAt: at(-60_000), FinishedAt: at(-59_500), Status: repository.ExecSucceeded, Kind: easyjob.RunCron},
	}
	tl := buildTimeline(nodes, runs, now, 5*time.Minute, false)
	if len(tl.Marks) != 3 || len(tl.Steps) != 2 {
		t.Fatalf("%d marks, %d step links; want 3 and 2", len(tl.Marks), len(tl.Steps))
	}
	root, step1, step2 := tl.Marks[0], tl.Marks[1], tl.Marks[2]
	if strings.Contains(root.Class, "step") || !strings.Contains(step1.Class, "step") || !strings.Contains(step2.Class, "step") {
		t.Errorf("classes %q %q %q: want the steps marked step", root.Class, step1.Class, step2.Class)
	}
	if step1.Y < root.Y+root.H || step2.Y != step1.Y || step1.Y+step1.H > tl.Lanes[0].Y+tl.Lanes[0].H {
		t.Errorf("root %+v, steps %+v %+v: want the steps below the root, in its lane", root, step1, step2)
	}
	if l := tl.Steps[0]; l.Y1 != root.Y+root.H || l.Y2 != step1.Y {
		t.Errorf("link %+v: want from the root down to step1", l)
	}
	if step1.Flag == "" {
		t.Error("the failed step is not flagged")
	}
}
