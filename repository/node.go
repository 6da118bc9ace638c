package repository

import "time"

// NodeID identifies a node. Ids are assigned by the store at registration
// and grow with start time, so "the next-higher live node" is well defined.
type NodeID int64

// Node is one running replica (one Scheduler) in a group.
type Node struct {
	ID          NodeID
	Group       string
	Name        string // host:pid unless configured
	Weight      int    // for the weight strategy; >= 1
	Counts      int64  // executions finished by this node
	StartedAt   time.Time
	HeartbeatAt time.Time // store clock
	// Leaving marks a node shutting down gracefully: it is not live (peers
	// take its released work at once) but, while it heartbeats, not dead
	// (its running jobs are not recovered under it).
	Leaving bool
	// TaskSet is the id (TaskSetID) of the set of task names the node
	// registered, published with NodeStore.PublishTaskSet; "" when the node
	// published none (it is then taken to run every task).
	TaskSet string
}
