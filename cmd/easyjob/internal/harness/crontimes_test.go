package harness

import (
	"testing"
	"time"
)

func TestCronTimes(t *testing.T) {
	from := time.Date(2030, 1, 1, 0, 0, 0, 500e6, time.UTC)
	got, err := cronTimes("* * * * * *", from, from.Add(10*time.Second))
	if err != nil || len(got) != 10 || !got[0].Equal(from.Truncate(time.Second).Add(time.Second)) {
		t.Fatalf("every second: %v %v", got, err)
	}
	got, err = cronTimes("*/2 * * * *", from, from.Add(10*time.Minute))
	if err != nil || len(got) != 5 {
		t.Fatalf("every 2 minutes: %d %v", len(got), err)
	}
	if got, _ := cronTimes(idleCron, from.Add(time.Hour), from.Add(2*time.Hour)); len(got) != 0 {
		t.Fatalf("yearly: %v", got)
	}
}
