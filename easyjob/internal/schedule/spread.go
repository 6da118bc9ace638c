package schedule

import (
	"hash/fnv"
	"time"
)

// SpreadOf is the offset of task's whole grid under a spread of window: a
// hash of the task's name alone, so every node computes the same offset
// and the task keeps one fixed grid (cron time + offset), while the tasks
// that share a cron land on offsets spread over [0, window). Whole
// milliseconds; 0 when window is below one.
func SpreadOf(task string, window time.Duration) time.Duration {
	ms := int64(window / time.Millisecond)
	if ms <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(task))
	return time.Duration(h.Sum64()%uint64(ms)) * time.Millisecond
}

// Spread returns s with every fire moved later by task's offset under
// window (SpreadOf): Next and Prev answer cron time + offset, and the
// window (Window) bounds the moved times. Unlike a jitter, the offset is
// part of the schedule: the stored next fire times are the moved ones, so
// the database sees the tasks of one cron come due over the window, not
// in one second. A one-off ("@at") keeps its explicit time; a window of
// 0 removes the shift.
func (s Schedule) Spread(task string, window time.Duration) Schedule {
	s.shift = 0
	if s.at.IsZero() {
		s.shift = SpreadOf(task, window)
	}
	return s
}

// Shift is the offset Spread moved s's fires by; 0 for none.
func (s Schedule) Shift() time.Duration { return s.shift }
