package easyjob

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/memory"
)

func TestSmokeMemory(t *testing.T) {
	t.Parallel()
	store := memory.New()
	var l ledger
	reg := func(s *Scheduler) {
		for i := range 20 {
			if err := s.Register(taskName(i), "* * * * * *", l.job(nil)); err != nil {
				t.Fatal(err)
			}
		}
		_ = s.Register("child", "", l.job(nil), Parent(taskName(0)))
	}
	for range 3 {
		cfg := fastConfig(store, "smoke")
		cfg.Strategy = "id_hash"
		start(t, cfg, reg)
	}
	waitFor(t, 10*time.Second, "every task and the child fired three times", func() bool {
		for i := range 20 {
			if l.count(taskName(i)) < 3 {
				return false
			}
		}
		return l.count("child") >= 3
	})
	fires := l.snapshot()
	t.Logf("fires=%d dups=%v child=%d", len(fires), l.duplicates(), l.count("child"))
	nodes := map[int64]int{}
	var maxLag time.Duration
	for _, f := range fires {
		nodes[f.node]++
		maxLag = max(maxLag, f.started.Sub(f.scheduled))
	}
	t.Logf("max lag %v", maxLag)
	t.Logf("per node %v", nodes)
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("duplicates: %v", d)
	}
}

func taskName(i int) string { return "task-" + string(rune('a'+i/26)) + string(rune('a'+i%26)) }
