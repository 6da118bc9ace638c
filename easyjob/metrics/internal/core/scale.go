package core

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// Delete forgets (group, task) and returns its state, nil if it had none.
func (t *Tasks[T]) Delete(group, task string) *T {
	k := Key{group, task}
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.m[k]
	delete(t.m, k)
	return v
}

// Len returns how many tasks the table holds.
func (t *Tasks[T]) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

// opLabels caches OpLabel by method name.
var opLabels sync.Map // string → string

// OpLabel returns the value of the op label of a store method: its name
// in snake_case ("Finish" → "finish", "CancelsSince" → "cancels_since",
// "StartExecutions" → "start_executions"; a run of capitals is one word:
// "ByID" → "by_id").
func OpLabel(method string) string {
	if v, ok := opLabels.Load(method); ok {
		return v.(string)
	}
	r := []rune(method)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]))
			endsRun := i > 0 && unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || endsRun {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	s := b.String()
	opLabels.Store(method, s)
	return s
}

// Seen is when a task last fired or ended a run here, for the series
// TTL: Unix nanoseconds.
type Seen struct{ at atomic.Int64 }

// Touch records now.
func (s *Seen) Touch() { s.at.Store(time.Now().UnixNano()) }

// Idle reports whether s was last touched before cutoff (a task never
// touched is not idle: it was made by a gauge read, not an event).
func (s *Seen) Idle(cutoff time.Time) bool {
	at := s.at.Load()
	return at != 0 && at < cutoff.UnixNano()
}

// TTLCutoff returns the moment before which a task idle for ttl, and for
// at least 4 of its intervals, is forgotten: a task that stopped firing
// keeps its dead-man series until its "not succeeded within 3
// intervals" alert has fired.
func TTLCutoff(now time.Time, ttl, interval time.Duration) time.Time {
	return now.Add(-max(ttl, 4*interval))
}

// Chain carries a run's interval to its chain children: a child has no
// cron of its own (or one that only gates it), so it runs once per fire
// of its root, and its interval is its root's (the longer of the two
// for a child with a cron).
type Chain struct {
	interval atomic.Int64 // the run's interval, nanoseconds
	child    atomic.Int64 // as a chain child: the interval inherited from its parent
}

type chainKey struct{}

// StartRun records r's interval on c, the state of r's task, and
// returns ctx carrying it for r's children (ctx itself when it carries c
// already).
func (c *Chain) StartRun(ctx context.Context, r observe.RunInfo) context.Context {
	d, _ := Interval(r.Cron)
	if r.Trigger == observe.TriggerChain {
		if p, ok := ctx.Value(chainKey{}).(*Chain); ok && p != c {
			if pd := time.Duration(p.interval.Load()); pd > 0 {
				d = max(d, pd)
				c.child.Store(int64(pd))
			}
		}
	}
	c.interval.Store(int64(d))
	if p, ok := ctx.Value(chainKey{}).(*Chain); ok && p == c {
		return ctx
	}
	return context.WithValue(ctx, chainKey{}, c)
}

// Interval returns the interval to export for the task of c whose cron
// as last fired is cron: that of its cron, or of its root for a chain
// child, the longer of the two when both are known.
func (c *Chain) Interval(cron string) (time.Duration, bool) {
	d, _ := Interval(cron)
	d = max(d, time.Duration(c.child.Load()))
	return d, d > 0
}

// TaskState is what an observer keeps of one task for its gauges and its
// TTL: its cron as last fired, its last success, its chain interval.
type TaskState struct {
	cron        atomic.Pointer[string]
	lastSuccess atomic.Uint64 // float64 bits of the Unix time; 0 before the first success
	Chain       Chain
	Seen        Seen
}

// Fired records e, an EventFire: the task is active, with e's cron. A
// chain step without a cron of its own fires with none: its interval is
// its root's (Chain).
func (t *TaskState) Fired(e observe.Event) {
	t.Seen.Touch()
	if e.Cron == "" && e.Trigger == observe.TriggerChain {
		return
	}
	if p := t.cron.Load(); p == nil || *p != e.Cron {
		c := e.Cron
		t.cron.Store(&c)
	}
}

// Ended records e, an EventRunEnd: the task is active, and its last
// success if e is one.
func (t *TaskState) Ended(e observe.Event) {
	t.Seen.Touch()
	if e.Status == repository.ExecSucceeded {
		t.lastSuccess.Store(math.Float64bits(float64(e.At.UnixNano()) / 1e9))
	}
}

// LastSuccess returns the Unix time of the last success, false before.
func (t *TaskState) LastSuccess() (float64, bool) {
	bits := t.lastSuccess.Load()
	return math.Float64frombits(bits), bits != 0
}

// Interval returns the task's interval (Chain.Interval), false when none
// is known.
func (t *TaskState) Interval() (time.Duration, bool) {
	cron := ""
	if p := t.cron.Load(); p != nil {
		cron = *p
	}
	return t.Chain.Interval(cron)
}

// Idle returns the tasks of tasks idle for ttl and 4 of their intervals
// (TTLCutoff); none without a TTL.
func Idle[T any](tasks *Tasks[T], ttl time.Duration, state func(*T) *TaskState) []Key {
	if ttl <= 0 {
		return nil
	}
	now := time.Now()
	var idle []Key
	tasks.Each(func(k Key, v *T) {
		t := state(v)
		d, _ := t.Interval()
		if t.Seen.Idle(TTLCutoff(now, ttl, d)) {
			idle = append(idle, k)
		}
	})
	return idle
}
