package easyjob

import (
	"strings"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository/postgres"
	"github.com/easyjob-go/easyjob/repository/postgres/pgbouncer"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestExactlyOnceThroughPgBouncer: 3 nodes, each with its own pool,
// reach PostgreSQL through a real PgBouncer in pool_mode=transaction; the
// first is told (easyjob_pooler=transaction), the other two find out.
// 20 every-second tasks fire once each second for 8 s: none twice, none
// missed after the first two seconds.
func TestExactlyOnceThroughPgBouncer(t *testing.T) {
	b := pgtest.NewPgBouncer(t, pgbouncer.Options{})
	via := pgtest.ViaPgBouncer(t, b, pgtest.SharedDatabase(t))
	group := groupFor(t)
	var l ledger
	var stores []*postgres.Store
	begin := time.Now()
	for i := range 3 {
		dsn := via
		if i == 0 {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + postgres.PoolerParam + "=transaction"
		}
		s := pgtest.OpenStore(t, dsn)
		stores = append(stores, s)
		start(t, Config{Store: s, Group: group}, everySecond(t, &l, 20))
	}
	time.Sleep(8 * time.Second)
	end := time.Now()
	assertEachSecondOnce(t, &l, names(20), begin.Add(2*time.Second), end.Add(-2*time.Second))
	if d := l.duplicates(); len(d) > 0 {
		t.Fatalf("duplicates: %v", d[:min(5, len(d))])
	}
	for i, s := range stores {
		if s.Pooler() != postgres.PoolerTransaction {
			t.Errorf("node %d: Pooler() = %v after %v behind PgBouncer, want transaction", i, s.Pooler(), end.Sub(begin).Round(time.Second))
		}
	}
	t.Logf("%d fires", len(l.snapshot()))
}
