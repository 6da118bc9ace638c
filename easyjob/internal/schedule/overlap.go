package schedule

import (
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

// Overlap applies the task's overlap policy (o.Overlap) to plan p, the
// next fire of a fire that was found due at
// found and whose run ended at end (database times). It returns the plan
// to write, whether its next fire is buffered (it came due while the run
// ran and runs at once, kind buffered, outside the misfire policy) and
// how many fires the policy dropped. buffered says the fire that ran was
// itself buffered: under buffer one (and cancel, terminate) the fires
// due before it started were dropped already and do not queue again.
//
// The node that holds the claim applies it as it writes the finish, so
// the policy holds wherever the run was: the fire after it is claimed
// only through this finish.
func Overlap(s Schedule, o repository.TaskOptions, p Plan, found, end time.Time, buffered bool) (Plan, bool, int) {
	if o.Overlap == repository.OverlapWait || o.Overlap == repository.OverlapAllowAll || p.Done || p.Next.IsZero() || !p.Run {
		return p, false, 0
	}
	one := o.Overlap == repository.OverlapBufferOne || o.Overlap == repository.OverlapCancel || o.Overlap == repository.OverlapTerminate
	if buffered && one && p.Next.Before(found) {
		next, ok := s.Next(found)
		if !ok {
			p.Next, p.Done = time.Time{}, true
			return p, false, 0
		}
		p.Next = next
	}
	if p.Next.After(end) {
		return p, false, 0 // the run ended before its next fire: no overlap
	}
	switch {
	case o.Overlap == repository.OverlapSkip:
		n := countFires(s, p.Next, end, repository.BufferLimit)
		next, ok := s.Next(end)
		p.Next, p.Done = next, !ok
		return p, false, n
	case one:
		return p, true, countFires(s, p.Next, end, repository.BufferLimit) - 1
	default: // buffer all, the newest BufferLimit of them
		n := countFires(s, p.Next, end, repository.BufferLimit+1)
		if n <= repository.BufferLimit {
			return p, true, 0
		}
		first := p.Next
		newest := newestFires(s, first.Add(-time.Nanosecond), end, repository.BufferLimit)
		p.Next = newest[len(newest)-1]
		// Counted up to a bound: the number is for the log, and a long
		// overrun of a per-second cron would cost one step per fire.
		return p, true, countFires(s, first, p.Next, 100*repository.BufferLimit) - 1
	}
}

// countFires counts the fires from first (a fire) to end included, at
// most limit of them.
func countFires(s Schedule, first, end time.Time, limit int) int {
	n := 0
	for t, ok := first, true; ok && !t.After(end) && n < limit; t, ok = s.Next(t) {
		n++
	}
	return n
}
