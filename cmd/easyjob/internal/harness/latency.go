package harness

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// latency summarises durations (milliseconds in JSON).
type latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	Min float64 `json:"min_ms"`
}

// percentile returns the nearest-rank q-quantile of sorted ds.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i]
}

// ms converts d to milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// summarize returns the percentiles of ds (zero for none).
func summarize(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return latency{
		N: len(s), P50: ms(percentile(s, .5)), P90: ms(percentile(s, .9)), P99: ms(percentile(s, .99)),
		Max: ms(s[len(s)-1]), Min: ms(s[0]),
	}
}

func (l latency) String() string {
	if l.N == 0 {
		return "-"
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  (n=%d)", fmtMS(l.P50), fmtMS(l.P90), fmtMS(l.P99), fmtMS(l.Max), l.N)
}

// fmtMS prints milliseconds readably: 1.25s, 42ms, 3.10ms.
func fmtMS(v float64) string {
	switch {
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.0fms", v)
	default:
		return fmt.Sprintf("%.2fms", v)
	}
}
