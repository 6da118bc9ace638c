package harness

import (
	"errors"
	"fmt"
)

// dbCost is the server's cost per fire over a trial's measured window. A
// nil figure is n/a; DBCostNA says why. CPU and WAL are server-wide:
// whatever else the server does meanwhile is counted too.
type dbCost struct {
	DBCPUMicrosPerFire *float64          `json:"db_cpu_us_per_fire"`
	WALBytesPerFire    *float64          `json:"wal_bytes_per_fire"`
	StmtMicrosPerFire  *float64          `json:"stmt_us_per_fire"`
	DBCostFires        int               `json:"db_cost_window_fires"`
	DBCostNA           map[string]string `json:"db_cost_na,omitempty"`
}

// newDBCost divides the counters' growth from a to b by the fires started
// in [a.at, b.at). A zero a (the window never opened) gives all n/a.
func newDBCost(a, b dbSample, fires []fire) dbCost {
	var c dbCost
	from, to := a.at.UnixNano(), b.at.UnixNano()
	for _, f := range fires {
		if f.Start >= from && f.Start < to {
			c.DBCostFires++
		}
	}
	figures := [dbMetrics]**float64{dbCPU: &c.DBCPUMicrosPerFire, dbWAL: &c.WALBytesPerFire, dbStmt: &c.StmtMicrosPerFire}
	names := [dbMetrics]string{dbCPU: "db_cpu", dbWAL: "wal", dbStmt: "stmt"}
	for i := range figures {
		err := a.errs[i]
		if err == nil {
			err = b.errs[i]
		}
		switch {
		case a.at.IsZero() || b.at.IsZero():
			err = errors.New("no measured window")
		case err == nil && c.DBCostFires == 0:
			err = errors.New("no fire in the measured window")
		}
		if err != nil {
			if c.DBCostNA == nil {
				c.DBCostNA = map[string]string{}
			}
			c.DBCostNA[names[i]] = err.Error()
			continue
		}
		v := (b.vals[i] - a.vals[i]) / float64(c.DBCostFires)
		*figures[i] = &v
	}
	return c
}

// fmtPerFire formats one figure of a dbCost with prec decimals, or "n/a".
func fmtPerFire(v *float64, prec int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

// addRows adds c's figures to a report table, with why one is n/a.
func (c dbCost) addRows(tb *table) {
	row := func(label, name string, v *float64, prec int, unit, note string) {
		if v == nil {
			tb.add(label, "n/a  ("+c.DBCostNA[name]+")")
			return
		}
		tb.add(label, fmtPerFire(v, prec)+" "+unit+"  "+note)
	}
	window := fmt.Sprintf("[server-wide, %d fires in the measured window]", c.DBCostFires)
	row("db cpu/fire", "db_cpu", c.DBCPUMicrosPerFire, 1, "µs", window+" (/proc, 100 ticks/s)")
	row("wal/fire", "wal", c.WALBytesPerFire, 0, "bytes", window)
	row("stmt time/fire", "stmt", c.StmtMicrosPerFire, 1, "µs", "[pg_stat_statements, scratch database]")
}
