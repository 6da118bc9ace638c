package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/observe"
)

func TestInterval(t *testing.T) {
	for cron, want := range map[string]time.Duration{
		"* * * * * *":                      time.Second,
		"*/5 * * * *":                      5 * time.Minute,
		"0 9 * * 1-5":                      72 * time.Hour, // Friday to Monday
		"CRON_TZ=Europe/Paris 0 0 * * * *": time.Hour,
		"0 0 1 * *":                        31 * 24 * time.Hour,
	} {
		if got, ok := Interval(cron); !ok || got != want {
			t.Errorf("Interval(%q) = %v, %v; want %v", cron, got, ok, want)
		}
	}
	for _, cron := range []string{"", "not a cron"} {
		if got, ok := Interval(cron); ok {
			t.Errorf("Interval(%q) = %v, want none", cron, got)
		}
	}
}

func TestVersion(t *testing.T) {
	v, gov := Version()
	if v == "" || gov == "" {
		t.Fatalf("Version() = %q, %q", v, gov)
	}
}

func TestGauges(t *testing.T) {
	var g Gauges
	g.Set(observe.Event{Kind: observe.EventGauges, Group: "b", Node: 1, Held: 3, Busy: 1, Live: 2})
	g.Set(observe.Event{Kind: observe.EventGauges, Group: "b", Node: 2, Held: 4, Busy: 2, Live: 3})
	g.Set(observe.Event{Kind: observe.EventGauges, Group: "a", Node: 3, Held: 1, Busy: 0, Live: 1})
	g.Set(observe.Event{Kind: observe.EventGauges, Group: "b", Node: 1, Held: 5, Busy: 1, Live: 2}) // replaces node 1's
	got := g.Groups()
	want := []GroupGauges{{Group: "a", Held: 1, Busy: 0, Live: 1}, {Group: "b", Held: 9, Busy: 3, Live: 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Groups() = %+v, want %+v", got, want)
	}
}

type fakeLister struct {
	group string
	rows  []easyjob.NodeInfo
	err   error
	calls int
}

func (f *fakeLister) Group() string { return f.group }
func (f *fakeLister) Nodes(ctx context.Context) ([]easyjob.NodeInfo, error) {
	f.calls++
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("no deadline")
	}
	return f.rows, f.err
}

func TestNodes(t *testing.T) {
	ok := &fakeLister{group: "g", rows: []easyjob.NodeInfo{
		{Live: true}, {Live: true}, {Leaving: true}, {}, {Dead: true}, {Dead: true, Leaving: true},
	}}
	bad := &fakeLister{group: "h", err: errors.New("down")}
	n := Nodes{Listers: []NodeLister{ok, bad}, Timeout: time.Second, TTL: time.Hour}
	got, err := n.States(context.Background())
	if err == nil || len(got) != 1 || got[0].Group != "g" || got[0].Counts != [4]int{2, 1, 1, 2} {
		t.Fatalf("States() = %+v, %v", got, err)
	}
	if _, _ = n.States(context.Background()); ok.calls != 1 {
		t.Fatalf("a read within the TTL queried again (%d calls)", ok.calls)
	}
	if got, err := (&Nodes{}).States(context.Background()); got != nil || err != nil {
		t.Fatalf("no listers: %v, %v", got, err)
	}
}

func TestOpLabel(t *testing.T) {
	for in, want := range map[string]string{
		"Finish": "finish", "CancelsSince": "cancels_since", "StartExecutions": "start_executions",
		"TaskSet": "task_set", "ByID": "by_id", "HTTPServer": "http_server", "Listen": "listen",
	} {
		if got := OpLabel(in); got != want {
			t.Errorf("OpLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
