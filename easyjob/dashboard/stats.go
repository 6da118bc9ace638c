package dashboard

import (
	"slices"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// fireStats sums up recent fires: the rate of root fires and their start
// lag (started − scheduled; a recovered fire's lag includes its failover).
type fireStats struct {
	PerMinute float64
	// Window is the span the rate was measured over: a minute, or less
	// when the sample of runs did not reach back that far.
	Window         time.Duration
	Sampled        bool // the run sample hit its bound
	LagP50, LagP99 time.Duration
	LagN           int
}

// rateWindow is the span fires per minute are counted over.
const rateWindow = time.Minute

// computeStats measures runs (newest first); truncated says the read hit
// its bound, so older fires in the window may be missing.
func computeStats(runs []easyjob.ExecutionInfo, now time.Time, truncated bool) fireStats {
	st := fireStats{Window: rateWindow, Sampled: truncated}
	if truncated && len(runs) > 0 {
		if span := now.Sub(runs[len(runs)-1].StartedAt); span < rateWindow {
			st.Window = max(span, time.Second)
		}
	}
	var lags []time.Duration
	fires := 0
	for _, x := range runs {
		if x.ParentExecutionID != 0 {
			continue // a chain step, not a fire
		}
		if x.StartedAt.After(now.Add(-st.Window)) {
			fires++
		}
		lags = append(lags, max(x.StartedAt.Sub(x.ScheduledAt), 0))
	}
	st.PerMinute = float64(fires) * float64(time.Minute) / float64(st.Window)
	if len(lags) > 0 {
		slices.Sort(lags)
		st.LagN = len(lags)
		st.LagP50 = quantile(lags, 0.50)
		st.LagP99 = quantile(lags, 0.99)
	}
	return st
}

// quantile is the nearest-rank q-quantile of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
