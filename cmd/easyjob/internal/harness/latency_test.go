package harness

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := summarize(ds)
	if l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 || l.N != 100 {
		t.Fatalf("got %+v", l)
	}
	if (summarize(nil) != latency{}) {
		t.Fatal("empty summary not zero")
	}
}
