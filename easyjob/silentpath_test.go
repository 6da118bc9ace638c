package easyjob

import (
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestSilentDatabasePath: when the path to PostgreSQL goes silent without
// a reset (packets vanish, sockets stay open), the node's calls give up
// after CallTimeout instead of waiting forever on a read, it fires again
// once the path heals, and its shutdown stays bounded while the path is
// silent (issue 30, item 3).
func TestSilentDatabasePath(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	pgtest.OpenStore(t, dsn) // migrated here, not through the path
	path, via := pgtest.NewSilentPath(t, dsn)

	cfg := fastConfig(nil, "silent")
	cfg.DSN, cfg.SkipMigrate = via, true
	cfg.CallTimeout = time.Second
	cfg.ShutdownGrace = time.Second
	var l ledger
	tn := start(t, cfg, func(s *Scheduler) {
		if err := s.Register("tick", "* * * * * *", l.job(nil)); err != nil {
			t.Fatal(err)
		}
	})
	waitFor(t, 10*time.Second, "a first fire", func() bool { return l.count("tick") > 0 })

	// The fault itself: a silence of several call timeouts, longer than
	// DeadAfter, with every loop's call stuck in a read when it begins.
	path.Silence()
	time.Sleep(4 * time.Second)
	path.Heal()
	healed := time.Now()
	waitFor(t, 10*time.Second, "a fire after the path healed", func() bool {
		for _, f := range l.snapshot() {
			if f.started.After(healed) {
				return true
			}
		}
		return false
	})
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("fires run twice: %v", d)
	}

	// Shutdown while the path is silent: every write it tries is bounded.
	path.Silence()
	stopped := time.Now()
	tn.cancel()
	tn.cancel = nil
	bound := cfg.ShutdownGrace + node.AbandonAfter + 2*node.ShutdownWrites + time.Second
	select {
	case err := <-tn.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if took := time.Since(stopped); took > bound {
			t.Fatalf("Run returned %v after its context ended on a silent path; want at most %v", took, bound)
		}
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("Run had not returned %v after its context ended on a silent path", bound+10*time.Second)
	}
}
