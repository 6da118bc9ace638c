// Package node is the runtime of one node of a group: its loops (loader,
// boss, heartbeat, recover, reconcile, housekeeping, listen), each in the
// file named after it and each owned, stopped and waited for by Run, and
// the path of a fire from the boss to its settled finish. The public
// easyjob package configures and starts it; see the Node type for the
// fire's path and shutdown.go for the order of a graceful stop.
package node
