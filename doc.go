// Package easyjob is the root of the easy-job module: documentation only.
// The library is the package easyjob/ inside it:
//
//	import "github.com/easyjob-go/easyjob/easyjob"
//
//	easyjob.Register("report", "*/5 * * * * *", buildReport) // every 5 s, UTC
//	easyjob.Register("cleanup", "@every 90s", cleanup)
//	err := easyjob.Run(ctx, easyjob.Config{DSN: os.Getenv("DATABASE_URL")})
//
// See `go doc github.com/easyjob-go/easyjob/easyjob` and the README
// (https://github.com/easyjob-go/easyjob) for a complete main.go. The other
// packages of the module:
//
//   - github.com/easyjob-go/easyjob/easyjob: Register, Run, New, the
//     task options, Config, and Client (trigger, pause, resume,
//     reschedule, remove, history from any process);
//   - github.com/easyjob-go/easyjob/strategy: the claim strategies and
//     Register for custom ones;
//   - github.com/easyjob-go/easyjob/repository/postgres and
//     repository/memory: the stores (Config.DSN, BunDB or DB choose
//     PostgreSQL; none, the memory store);
//   - github.com/easyjob-go/easyjob/cmd/easyjob: the operator CLI
//     (go install github.com/easyjob-go/easyjob/cmd/easyjob@latest).
package easyjob
