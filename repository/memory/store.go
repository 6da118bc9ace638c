package memory

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/repository"
)

var (
	_ repository.Store    = (*Store)(nil)
	_ repository.Notifier = (*Store)(nil)
)

// Store is an in-memory repository.Store and repository.Notifier.
// The zero value is not usable; call New.
type Store struct {
	clock func() time.Time
	calls atomic.Int64

	mu          sync.Mutex
	lastNode    repository.NodeID
	lastTask    repository.TaskID
	lastExec    int64
	nodes       map[repository.NodeID]*repository.Node
	tasks       map[repository.TaskID]*repository.Task
	byName      map[string]map[string]repository.TaskID          // group -> name -> id
	byHandler   map[string]map[string]map[repository.TaskID]bool // group -> handler -> ids (DueTasks)
	execs       map[int64]*repository.Execution
	execsByTask map[repository.TaskID][]int64 // ascending ids
	logs        map[int64]string              // run logs by execution id (RunLogWriter)
	listeners   map[string]map[*listener]struct{}
	taskSets    map[string][]string                   // id -> sorted names
	audit       []repository.AuditEntry               // ascending ids
	handlers    map[string]map[string]json.RawMessage // group -> kind -> schema
	// heldFire is the claimed fire of a doing row an operator re-timed (the
	// Postgres column held_fire), until its finish or next claim.
	heldFire map[repository.TaskID]time.Time
	// revisions are the definitions each task took (the table
	// easyjob_task_revisions), ascending by revision.
	revisions map[repository.TaskID][]repository.Revision
	// calendars are the exclusion calendars, group -> name -> calendar.
	calendars map[string]map[string]repository.Calendar
	// cancels are the latest cancel request of each task (the Postgres
	// columns cancel_at and cancel_by).
	cancels map[repository.TaskID]repository.RunCancel
	// alerts are the alert rules and events (alert.go).
	alerts alertTables
	// dag is the state of DAG steps and run results (dag.go).
	dag dagState
}

// New returns an empty store.
func New(opts ...Option) *Store {
	s := &Store{
		clock:       time.Now,
		nodes:       make(map[repository.NodeID]*repository.Node),
		tasks:       make(map[repository.TaskID]*repository.Task),
		byName:      make(map[string]map[string]repository.TaskID),
		byHandler:   make(map[string]map[string]map[repository.TaskID]bool),
		handlers:    make(map[string]map[string]json.RawMessage),
		execs:       make(map[int64]*repository.Execution),
		logs:        make(map[int64]string),
		execsByTask: make(map[repository.TaskID][]int64),
		listeners:   make(map[string]map[*listener]struct{}),
		taskSets:    make(map[string][]string),
		heldFire:    make(map[repository.TaskID]time.Time),
		revisions:   make(map[repository.TaskID][]repository.Revision),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Calls reports how many store operations have been made so far: one per
// method call that would be a round trip to a database (an empty Claim,
// Release or Finish does no I/O and is not counted).
func (s *Store) Calls() int64 { return s.calls.Load() }

// Close is a no-op; it returns nil.
func (s *Store) Close() error { return nil }

// Now returns the store's clock, truncated to microseconds.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.begin(ctx); err != nil {
		return time.Time{}, err
	}
	return s.now(), nil
}

// begin counts one call and refuses a done context, as a database driver would.
func (s *Store) begin(ctx context.Context) error {
	s.calls.Add(1)
	return ctx.Err()
}

// now reads the clock with timestamptz precision.
func (s *Store) now() time.Time { return norm(s.clock()) }

// norm gives t the precision and form of a timestamptz read back: UTC,
// microseconds, no monotonic reading. The zero time stays zero.
func norm(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}
