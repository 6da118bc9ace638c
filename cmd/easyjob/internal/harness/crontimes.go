package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/adhocore/gronx"
)

// cronTimes lists the fire times of expr (UTC) in [from, to], at second
// precision (the finest a cron expression has).
func cronTimes(expr string, from, to time.Time) ([]time.Time, error) {
	g := gronx.New()
	if !g.IsValid(expr) {
		return nil, fmt.Errorf("invalid cron %q", expr)
	}
	fiveFields := len(strings.Fields(expr)) == 5
	var out []time.Time
	t := from.UTC().Truncate(time.Second)
	if t.Before(from) {
		t = t.Add(time.Second)
	}
	for ; !t.After(to); t = t.Add(time.Second) {
		if fiveFields && t.Second() != 0 {
			continue
		}
		due, err := g.IsDue(expr, t)
		if err != nil {
			return nil, err
		}
		if due {
			out = append(out, t)
		}
	}
	return out, nil
}
