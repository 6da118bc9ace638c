package easyjob

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/repository/instrument"
)

// State is where a Scheduler is in its life, as Health reports it.
type State string

// States of a Scheduler.
const (
	StateNew      State = "new"      // Run not called yet
	StateStarting State = "starting" // Run opens and migrates the store, registers the node
	StateRunning  State = "running"  // the node is registered and runs its loops
	StateStopping State = "stopping" // Run's context is done: the node shuts down
	StateStopped  State = "stopped"  // Run returned
)

// Health is a snapshot of a Scheduler's state for probes and dashboards.
type Health struct {
	// State is one of StateNew, StateStarting, StateRunning, StateStopping,
	// StateStopped.
	State State `json:"state"`
	// Live: Run runs and its heartbeat loop is not wedged: a heartbeat
	// began or ended within WedgedAfter (one that fails, because the
	// database is away, still counts: a replica is not restarted for an
	// outage it cannot fix). A node that is starting or shutting down is
	// live.
	Live bool `json:"live"`
	// Ready: the store is migrated, the node registered, not shutting down,
	// and its last good heartbeat is within Config.LiveAfter: peers count it
	// as live.
	Ready bool `json:"ready"`
	// Migrated: the store is open and migrated (or Config.SkipMigrate).
	Migrated bool `json:"migrated"`
	// NodeID is the node's id once registered.
	NodeID int64 `json:"node_id,omitempty"`
	// LastHeartbeat is when the last good heartbeat was sent (local
	// clock; zero before the node registered) and HeartbeatAge its age.
	LastHeartbeat time.Time     `json:"last_heartbeat,omitzero"`
	HeartbeatAge  time.Duration `json:"-"` // JSON: heartbeat_age_seconds
	// WedgedAfter is the liveness bound: max(10 × HeartbeatInterval,
	// 3 × DeadAfter), 10 s by default.
	WedgedAfter time.Duration `json:"-"` // JSON: wedged_after_seconds
	// Reason says why the node is not ready (or not live); empty when ready.
	Reason string `json:"reason,omitempty"`
	// Collisions names the tasks that live nodes of the group register
	// with different code, and who does: two services sharing a group and
	// a task name, where each node runs only its own job (give each
	// service its own Group). Checked at start and once a minute; it does
	// not make the node unready.
	Collisions []string `json:"collisions,omitempty"`
}

// MarshalJSON writes h with its durations in seconds.
func (h Health) MarshalJSON() ([]byte, error) {
	type plain Health // without this method
	return json.Marshal(struct {
		plain
		HeartbeatAge float64 `json:"heartbeat_age_seconds"`
		WedgedAfter  float64 `json:"wedged_after_seconds"`
	}{plain(h), seconds(h.HeartbeatAge), seconds(h.WedgedAfter)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (h *Health) UnmarshalJSON(b []byte) error {
	type plain Health
	var v struct {
		plain
		HeartbeatAge float64 `json:"heartbeat_age_seconds"`
		WedgedAfter  float64 `json:"wedged_after_seconds"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*h = Health(v.plain)
	h.HeartbeatAge, h.WedgedAfter = fromSeconds(v.HeartbeatAge), fromSeconds(v.WedgedAfter)
	return nil
}

// runState is what Run tells Health; Health reads it with atomics only.
type runState struct {
	ended     atomic.Bool
	startErr  atomic.Pointer[error] // the last failed start, while Run retries
	node      atomic.Pointer[node.Node]
	nodeID    atomic.Int64 // from the store's answers, not the node's fields
	beatBegan atomic.Int64 // unix nanos (local) when the last Heartbeat call began
	beatEnded atomic.Int64 // and ended, whatever its outcome
}

// Begin implements instrument.Hook: a heartbeat began (Health's
// progress counts a heartbeat in flight).
func (st *runState) Begin(op string, at time.Time) {
	if op == "Heartbeat" {
		st.beatBegan.Store(at.UnixNano())
	}
}

// End implements instrument.Hook: a heartbeat ended, whatever its
// outcome, or the node registered.
func (st *runState) End(c instrument.Call) {
	switch {
	case c.Op == "Heartbeat":
		st.beatEnded.Store(time.Now().UnixNano())
	case c.Op == "RegisterNode" && c.Err == nil:
		st.nodeID.Store(int64(c.Node))
	}
}

// Health reports the Scheduler's state. It is cheap (a few atomic loads)
// and safe to call from any goroutine, before, during and after Run.
func (s *Scheduler) Health() Health {
	s.mu.Lock()
	started := s.running
	s.mu.Unlock()
	hb := s.cfg.HeartbeatInterval
	h := Health{WedgedAfter: max(10*hb, 3*s.cfg.DeadAfter)}
	n := s.health.node.Load()
	switch {
	case !started:
		h.State, h.Reason = StateNew, "Run not called"
		return h
	case s.health.ended.Load():
		h.State, h.Reason = StateStopped, "Run returned"
		h.Migrated = n != nil
		return h
	case n == nil:
		h.State, h.Live, h.Reason = StateStarting, true, "opening and migrating the store"
		if err := s.health.startErr.Load(); err != nil {
			h.Reason = "database not answering at start, retrying: " + (*err).Error()
		}
		return h
	}
	h.Migrated = true
	now := time.Now()
	lastBeat, beaten := n.LastBeat()
	if !beaten {
		h.State, h.Live, h.Reason = StateStarting, true, "registering the node"
		return h
	}
	h.NodeID = s.health.nodeID.Load()
	h.LastHeartbeat = lastBeat
	h.HeartbeatAge = now.Sub(h.LastHeartbeat)
	if n.Stopping() {
		h.State, h.Live, h.Reason = StateStopping, true, "shutting down"
		return h
	}
	h.State = StateRunning
	for _, c := range n.Collisions() {
		h.Collisions = append(h.Collisions, c.Name+": "+c.Describe())
	}
	progress := max(lastBeat.UnixNano(), s.health.beatBegan.Load(), s.health.beatEnded.Load())
	h.Live = now.Sub(time.Unix(0, progress)) <= h.WedgedAfter
	h.Ready = h.HeartbeatAge <= s.cfg.LiveAfter
	switch {
	case !h.Live:
		h.Reason = "heartbeat loop wedged: no heartbeat began or ended for " + now.Sub(time.Unix(0, progress)).Round(time.Millisecond).String()
	case !h.Ready:
		h.Reason = "last good heartbeat " + h.HeartbeatAge.Round(time.Millisecond).String() + " ago, past LiveAfter " + s.cfg.LiveAfter.String()
	}
	return h
}

// HealthHandler serves Health as JSON for probes: a path ending in
// "/livez" answers 200 while Health().Live, any other path (/readyz,
// /healthz, /) answers 200 while Health().Ready; 503 otherwise. Use
// /livez for a Kubernetes liveness probe and /readyz for readiness:
//
//	mux.Handle("/livez", s.HealthHandler())
//	mux.Handle("/readyz", s.HealthHandler())
func (s *Scheduler) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := s.Health()
		ok := h.Ready
		if strings.HasSuffix(r.URL.Path, "/livez") {
			ok = h.Live
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if ok {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		if r.Method != http.MethodHead {
			_ = json.NewEncoder(w).Encode(h)
		}
	})
}
