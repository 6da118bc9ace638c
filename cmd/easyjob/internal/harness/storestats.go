package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// storeStats is a snapshot of a node's store counters (the stats file of a
// node process, as JSON).
type storeStats struct {
	At           int64            `json:"at_unix_nano"` // when the snapshot was taken
	NodeIDs      []int64          `json:"node_ids,omitempty"`
	Calls        map[string]int64 `json:"calls"`
	CallNanos    map[string]int64 `json:"call_nanos,omitempty"` // time the calls took, by method
	Errors       map[string]int64 `json:"errors,omitempty"`
	ClaimAsked   int64            `json:"claim_refs_asked"`
	ClaimWon     int64            `json:"claim_rows_won"`
	FinishRows   int64            `json:"finish_rows"`
	StartRows    int64            `json:"start_rows"`      // executions asked of StartExecutions
	FencedFinish int64            `json:"fenced_finishes"` // Finish results with ErrClaimLost
	StartLost    int64            `json:"start_lost"`      // StartExecution with ErrClaimLost
	Recovered    int64            `json:"recovered"`       // successful Recover calls
	Exited       bool             `json:"exited,omitempty"`
	// PeakRSSBytes is the node process's own VmHWM (/proc/self/status).
	// The rusage of a child is not used for memory: a child forked with
	// CLONE_VM starts on the harness's address space, so its ru_maxrss
	// includes the harness's peak at spawn time.
	PeakRSSBytes int64 `json:"peak_rss_bytes,omitempty"`
}

// RoundTrips is the number of store calls that cost a round trip (every
// method but Listen).
func (s storeStats) RoundTrips() int64 {
	var k int64
	for name, v := range s.Calls {
		if name != "Listen" {
			k += v
		}
	}
	return k
}

// Conflicts is the number of claims attempted but lost.
func (s storeStats) Conflicts() int64 { return s.ClaimAsked - s.ClaimWon }

// add accumulates o into s.
func (s *storeStats) add(o storeStats) {
	if s.Calls == nil {
		s.Calls = map[string]int64{}
	}
	if s.Errors == nil {
		s.Errors = map[string]int64{}
	}
	if s.CallNanos == nil {
		s.CallNanos = map[string]int64{}
	}
	for k, v := range o.Calls {
		s.Calls[k] += v
	}
	for k, v := range o.CallNanos {
		s.CallNanos[k] += v
	}
	for k, v := range o.Errors {
		s.Errors[k] += v
	}
	s.NodeIDs = append(s.NodeIDs, o.NodeIDs...)
	s.ClaimAsked += o.ClaimAsked
	s.ClaimWon += o.ClaimWon
	s.FinishRows += o.FinishRows
	s.StartRows += o.StartRows
	s.FencedFinish += o.FencedFinish
	s.StartLost += o.StartLost
	s.Recovered += o.Recovered
	s.At = max(s.At, o.At)
}

// sub returns s − o for the counters (rates over a window).
func (s storeStats) sub(o storeStats) storeStats {
	d := storeStats{At: s.At, Calls: map[string]int64{}, Errors: map[string]int64{}, CallNanos: map[string]int64{}}
	for k, v := range s.Calls {
		d.Calls[k] = v - o.Calls[k]
	}
	for k, v := range s.CallNanos {
		d.CallNanos[k] = v - o.CallNanos[k]
	}
	for k, v := range s.Errors {
		d.Errors[k] = v - o.Errors[k]
	}
	d.ClaimAsked = s.ClaimAsked - o.ClaimAsked
	d.ClaimWon = s.ClaimWon - o.ClaimWon
	d.FinishRows = s.FinishRows - o.FinishRows
	d.StartRows = s.StartRows - o.StartRows
	d.FencedFinish = s.FencedFinish - o.FencedFinish
	d.StartLost = s.StartLost - o.StartLost
	d.Recovered = s.Recovered - o.Recovered
	return d
}

// writeStats replaces path atomically with st as JSON.
func writeStats(path string, st storeStats) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// readStats reads a stats file; ok is false when there is none yet.
func readStats(path string) (storeStats, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return storeStats{}, false
	}
	var st storeStats
	if json.Unmarshal(b, &st) != nil {
		return storeStats{}, false
	}
	return st, true
}
