package harness

// safetyMaxTasks bounds the capacity search when --capacity-max is 0: the
// search raises K until a trial fails, and a machine (or a judge) that
// never fails must not keep it doubling forever. Registering this many
// tasks already takes most of a default trial.
const safetyMaxTasks = 256000

// capacitySearch chooses the K of each capacity trial from the outcomes of
// the ones before: it doubles K from start while trials hold, up to its
// limit, then bisects between the largest K held and the smallest that
// failed. It runs nothing: findCapacity feeds it real trials, the tests a
// made-up machine.
type capacitySearch struct {
	start    int // first K
	userMax  int // --capacity-max; 0 = none (safetyMaxTasks)
	steps    int // bisection steps after the first failure
	lo, hi   int // largest K held, smallest K failed (0 = none yet)
	bisected int // trials recorded after the first failure
}

func newCapacitySearch(start, userMax, steps int) *capacitySearch {
	return &capacitySearch{start: start, userMax: userMax, steps: steps}
}

// limit is the largest K the search tries.
func (s *capacitySearch) limit() int {
	if s.userMax > 0 {
		return s.userMax
	}
	return safetyMaxTasks
}

// next returns the K to try next, or false when the search is over: the
// first K failed (nothing below it is tried), the limit held, or the
// bisection used its steps or narrowed the gap to 5 % (10 tasks at least).
func (s *capacitySearch) next() (int, bool) {
	switch {
	case s.lo == 0 && s.hi == 0:
		return max(min(s.start, s.limit()), 1), true
	case s.hi == 0: // raising: every trial so far held
		if s.lo >= s.limit() {
			return 0, false
		}
		return min(s.lo*2, s.limit()), true
	case s.lo == 0, s.bisected >= s.steps, s.hi-s.lo <= max(s.lo/20, 10):
		return 0, false
	}
	return (s.lo + s.hi) / 2, true
}

// record takes the outcome of the trial of k.
func (s *capacitySearch) record(k int, held bool) {
	if s.hi > 0 {
		s.bisected++
	}
	switch {
	case held:
		s.lo = max(s.lo, k)
	case s.hi == 0 || k < s.hi:
		s.hi = k
	}
}

// best is the largest K held (0 if none).
func (s *capacitySearch) best() int { return s.lo }

// failed is the smallest K that failed (0 if none).
func (s *capacitySearch) failed() int { return s.hi }

// capped says which cap, if any, ended the search with every trial held:
// "capacity-max" (the user's), "safety" (safetyMaxTasks), or "" when a
// trial failed, so that the capacity is bracketed, not a ceiling.
func (s *capacitySearch) capped() string {
	switch {
	case s.hi > 0 || s.lo < s.limit():
		return ""
	case s.userMax > 0:
		return "capacity-max"
	}
	return "safety"
}
