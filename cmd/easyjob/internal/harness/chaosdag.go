package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// The DAG task set (chaos --dag): DAG steps (easyjob.Parents), a sharded
// task with its reduce, a broadcast task and a daemon, each run recorded
// in the ledger, judged apart from the bench tasks (chaosdagverdict.go):
//
//	dag-a (every second) -> dag-b, dag-c -> dag-d (after both)
//	dag-f (every second) -> dag-f0 .. dag-f7 -> dag-fj (after all 8)
//	dag-s (every second, Shards(16): dag-s[0] .. dag-s[15]) -> dag-r
//	dag-all (every second, Broadcast: once per live node)
//	dag-daemon (Daemon: one instance alive in the group)
//
// A run of a DAG task is recorded as it ends (fire.End, like an overlap
// task's), with in the ledger's exec column (which no other task uses:
// easyjob.Info carries no execution id) the number of its parents'
// results that name its own fire, or dagResultsUnread when it could not
// read them. The daemon records an "incarnation alive" line every
// dagBeat until its context ends: each carries the incarnation's start
// and, as its end, the time of the beat.

// The DAG set's task names.
const (
	dagPrefix    = "dag-"
	dagShardRoot = "dag-s"      // its own row splits, unrecorded; its shards are dag-s[i]
	dagReduce    = "dag-r"      // after the 16 shards
	dagBroadcast = "dag-all"    // Broadcast
	dagDaemon    = "dag-daemon" // Daemon
	dagShards    = 16
	dagFanOut    = 8
	dagCron      = "* * * * * *"
)

// dagRun is how long a run of a DAG task lasts: long enough for a
// sibling on another node to run at the same time.
const dagRun = 20 * time.Millisecond

// dagBeat is how often the daemon records that its incarnation is alive.
const dagBeat = 100 * time.Millisecond

// dagResultsUnread is the results count of a run that could not read its
// parents' results (the database away).
const dagResultsUnread = -1

// dagTask is one registration of the DAG set.
type dagTask struct {
	name      string
	parents   []string // registered parents (Parents); none: a root on dagCron
	shards    int
	broadcast bool
	daemon    bool
}

// dagTasks lists the DAG set's registrations, parents before steps.
func dagTasks() []dagTask {
	ts := []dagTask{
		{name: "dag-a"},
		{name: "dag-b", parents: []string{"dag-a"}},
		{name: "dag-c", parents: []string{"dag-a"}},
		{name: "dag-d", parents: []string{"dag-b", "dag-c"}},
		{name: "dag-f"},
	}
	fan := make([]string, dagFanOut)
	for i := range fan {
		fan[i] = fmt.Sprintf("dag-f%d", i)
		ts = append(ts, dagTask{name: fan[i], parents: []string{"dag-f"}})
	}
	return append(ts,
		dagTask{name: "dag-fj", parents: fan},
		dagTask{name: dagShardRoot, shards: dagShards},
		dagTask{name: dagReduce, parents: []string{dagShardRoot}},
		dagTask{name: dagBroadcast, broadcast: true},
		dagTask{name: dagDaemon, daemon: true},
	)
}

// shardName names shard i of a sharded task as its row does: "dag-s[3]".
func shardName(task string, i int) string { return fmt.Sprintf("%s[%d]", task, i) }

// isDagTask reports whether a ledger line's task is of the DAG set.
func isDagTask(task string) bool { return strings.HasPrefix(task, dagPrefix) }

// registerDagTasks registers the DAG set on s.
func registerDagTasks(s *easyjob.Scheduler, l ledger) error {
	for _, t := range dagTasks() {
		cron, job := dagCron, dagJob(l)
		var opts []easyjob.Option
		switch {
		case t.daemon:
			cron, job = "", daemonJob(l)
			opts = append(opts, easyjob.Daemon())
		case t.broadcast:
			opts = append(opts, easyjob.Broadcast())
		case len(t.parents) > 0:
			cron = ""
			opts = append(opts, easyjob.Parents(t.parents...))
		}
		if t.shards > 0 {
			opts = append(opts, easyjob.Shards(t.shards))
		}
		if err := s.Register(t.name, cron, job, opts...); err != nil {
			return fmt.Errorf("DAG set: %s: %w", t.name, err)
		}
	}
	return nil
}

// dagResult is what each run of a DAG task hands the steps after it.
type dagResult struct {
	Task string `json:"task"`
	Fire int64  `json:"fire"` // its ScheduledAt, unix nanos
}

// dagJob reads its parents' results (a root's are none), runs dagRun,
// sets its result and records the run as it ends.
func dagJob(l ledger) easyjob.Func {
	return func(ctx context.Context) error {
		f := fireFromContext(ctx)
		f.Exec = int64(validParentResults(ctx, f.Sched))
		t := time.NewTimer(dagRun)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err() // cut short: not a run to judge
		}
		info, _ := easyjob.InfoFromContext(ctx)
		if err := easyjob.SetResult(ctx, dagResult{Task: info.Task, Fire: f.Sched}); err != nil {
			return err
		}
		f.End = time.Now().UnixNano()
		l.record(f)
		return nil
	}
}

// validParentResults counts the parent results of the running step that
// come from the parent they are filed under and name its fire (sched);
// dagResultsUnread when they could not be read for a few seconds. A
// failure to read is not the job's: returned, it would fail the run and
// skip every step after it.
func validParentResults(ctx context.Context, sched int64) int {
	var in map[string]json.RawMessage
	var err error
	for attempt := 1; ; attempt++ {
		if in, err = easyjob.ParentResults(ctx); err == nil {
			break
		}
		if attempt == 5 || ctx.Err() != nil {
			return dagResultsUnread
		}
		select {
		case <-ctx.Done():
			return dagResultsUnread
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
	n := 0
	for parent, raw := range in {
		var r dagResult
		if json.Unmarshal(raw, &r) == nil && r.Task == parent && r.Fire == sched {
			n++
		}
	}
	return n
}

// daemonJob records an "incarnation alive" line every dagBeat, and a last
// one as its context ends.
func daemonJob(l ledger) easyjob.Func {
	return func(ctx context.Context) error {
		f := fireFromContext(ctx)
		t := time.NewTicker(dagBeat)
		defer t.Stop()
		for {
			f.End = time.Now().UnixNano()
			l.record(f)
			select {
			case <-ctx.Done():
				f.End = time.Now().UnixNano()
				l.record(f)
				return nil
			case <-t.C:
			}
		}
	}
}
