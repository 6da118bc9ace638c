// Package easyjob runs the cron jobs of a Go service across all of its
// replicas with no leader and no extra server.
//
// Every replica is a peer. The peers share one PostgreSQL database (or, for
// a single process, the embedded memory store); each polls for due tasks,
// keeps those its claim strategy accepts, claims them with version-checked
// updates, fires them from a local delay queue, runs parent-then-child
// chains, heartbeats, and recovers the tasks of a dead peer.
//
//	easyjob.Register("report", "0 */5 * * * *", buildReport)
//	easyjob.Register("mail", "", mailReport, easyjob.Parent("report"))
//	err := easyjob.Run(ctx, easyjob.Config{DSN: os.Getenv("DATABASE_URL")})
//
// Scaling out is starting more replicas. A job receives a context carrying
// its execution's metadata (see InfoFromContext) and is cancelled when its
// timeout expires, its node shuts down or its node loses the claim.
//
// This package is the public API only. The runtime of a node lives in
// easyjob/internal (node: the loops; claim: a claim's state machine;
// dispatch: the delay queue and worker pool; schedule: fire times), the
// store contracts in repository (Runtime for nodes, Control for Client),
// and what a node reports to metrics and traces in easyjob/observe.
package easyjob
