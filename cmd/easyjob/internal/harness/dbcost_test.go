package harness

import (
	"errors"
	"testing"
	"time"
)

func TestNewDBCost(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := dbSample{at: t0, vals: [dbMetrics]float64{dbCPU: 1e6, dbWAL: 5000}}
	b := dbSample{at: t0.Add(10 * time.Second), vals: [dbMetrics]float64{dbCPU: 1.5e6, dbWAL: 9000}}
	a.errs[dbStmt] = errors.New("no pg_stat_statements")
	b.errs[dbStmt] = a.errs[dbStmt]
	fires := []fire{
		{Start: t0.Add(-time.Second).UnixNano()}, // before the window
		{Start: t0.UnixNano()},
		{Start: t0.Add(5 * time.Second).UnixNano()},
		{Start: b.at.UnixNano()}, // at its end: after
	}
	c := newDBCost(a, b, fires)
	if c.DBCostFires != 2 || c.DBCPUMicrosPerFire == nil || *c.DBCPUMicrosPerFire != 250000 ||
		c.WALBytesPerFire == nil || *c.WALBytesPerFire != 2000 || c.StmtMicrosPerFire != nil ||
		c.DBCostNA["stmt"] != "no pg_stat_statements" {
		t.Fatalf("cost %+v", c)
	}
	if c := newDBCost(dbSample{}, b, fires); c.DBCPUMicrosPerFire != nil || len(c.DBCostNA) != dbMetrics {
		t.Fatalf("no window: %+v", c)
	}
}
