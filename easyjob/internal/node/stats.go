package node

import "sync/atomic"

// stats are counters for status output and tests.
type stats struct {
	claimed, conflicts, fired, fenced, released atomic.Int64
	handedOff                                   atomic.Int64 // claims given up by a finish for a peer
	takenBack                                   atomic.Int64 // handed-over tasks no peer took, claimed back before their fire
	voided                                      atomic.Int64 // successors that fired but were not confirmed (internal/claim: Claim.Successor)
}
