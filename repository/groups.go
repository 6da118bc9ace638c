package repository

import (
	"context"
	"time"
)

// GroupReader reads the groups of a database side by side (the
// dashboard's all-groups overview, `easyjob groups`), at a cost that
// follows the groups listed, the notable tasks of each (running, paused,
// failing) and a bounded sample of the recent runs, not the size of a
// group.
type GroupReader interface {
	// GroupSummaries lists the groups q selects, sorted (the store's order
	// of names), with their counts.
	GroupSummaries(ctx context.Context, q GroupQuery) ([]GroupSummary, error)
}

// GroupQuery selects groups for GroupSummaries.
type GroupQuery struct {
	// Names, when set, are the groups to summarise (a group with nothing
	// in it gets zero counts); when empty, the groups that have tasks (not
	// removed) or node rows are listed, a page at a time.
	Names []string
	// After starts the page at the first group sorting after it.
	After string
	// Limit bounds the page (0 means 100, at most GroupLimit).
	Limit int
	// LiveWithin judges the live nodes as NodeReader.LiveNodes does.
	LiveWithin time.Duration
	// FiresWithin is the span, back from the store's now, whose runs
	// GroupSummary.Fires counts; FailuresWithin the one of
	// GroupSummary.Failures (0: none counted).
	FiresWithin, FailuresWithin time.Duration
}

// GroupLimit bounds a page of GroupSummaries.
const GroupLimit = 1000

// GroupRunSample bounds the recent runs (and, apart, the recent failures)
// GroupSummaries reads over all the groups of a page: the newest ones of
// the span. A count that reached it is flagged (FiresCapped,
// FailuresCapped) as "at least".
const GroupRunSample = 10000

// GroupSummary is one group at a glance.
type GroupSummary struct {
	Group string
	// Tasks counts the group's tasks (not removed); Running those claimed
	// by a node (status doing: queued for their fire or running), Paused
	// those paused or pausing, Failing those whose last run failed or
	// timed out.
	Tasks, Running, Paused, Failing int
	// Nodes counts the group's node rows, LiveNodes those live.
	Nodes, LiveNodes int
	// Fires counts the runs started within GroupQuery.FiresWithin;
	// Failures the runs started within FailuresWithin that ended failed,
	// timed out, abandoned or fenced, the newest of them at LastFailure
	// (zero when none). Capped: the sample bound was reached, the count is
	// a lower bound.
	Fires, Failures             int
	FiresCapped, FailuresCapped bool
	LastFailure                 time.Time
}
