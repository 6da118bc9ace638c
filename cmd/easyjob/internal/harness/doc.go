// Package harness is the measurement harness behind `easyjob bench` and
// `easyjob chaos`: it runs easyjob nodes on a scratch PostgreSQL database
// and judges the schedule they kept from what the jobs themselves saw.
//
// The commands (each returns the process exit status):
//
//   - Bench runs N nodes with K near-instant tasks, in this process or as
//     node processes (--procs), and reports fires/s, start lag, duplicate
//     and missed fires, claim conflicts, store round trips per fire, CPU,
//     peak RSS and the idle cost; --find-capacity searches the largest K
//     that keeps a p99 start lag bound (raising K until a trial fails),
//     then measures with pgbench what the finish write pattern alone
//     sustains on the server, to give the capacity as a share of it.
//     With --schedules N the nodes register one handler kind instead, and
//     the harness first creates N runtime schedules with
//     Client.CreateMany (K of them every second, the others never due in
//     the run, plus --burst B all due in one second), then also reports
//     the creation rate, the loader's time, the burst's start lag and the
//     task lists' latency at that size.
//   - Chaos runs node processes and SIGKILLs, SIGSTOPs and restarts them
//     (and PostgreSQL, with --pg-restart or --pg-stop; it silences the
//     path to PostgreSQL with --silent-path and steps the database's clock
//     with --clock-step, on a private server run under libfaketime; with
//     --patroni it runs on a private 3-member Patroni cluster and switches
//     it over, kills its leader's postmaster or its leader's Patroni, the
//     nodes reaching it through a multi-host DSN or, with --patroni-via
//     haproxy, through HAProxy; with --pgbouncer the nodes go through a
//     private PgBouncer in transaction mode, which it SIGKILLs and starts
//     again), then
//     reports failover times, duplicates (allowed re-runs of interrupted
//     fires vs violations), lost fires and processes that exited on their
//     own.
//   - Node is the hidden NodeCommand: one node process. Bench and Chaos
//     start node processes by copying the running binary (os.Executable)
//     into the run's directory and executing it with NodeCommand, so the
//     binary's command table must dispatch NodeCommand to Node.
//
// How a run is judged: every job appends one line to a ledger (in memory,
// or a file per node process opened with O_APPEND and written with one
// write(2) per fire, so it survives a SIGKILL); each node's store is
// wrapped in a counting decorator whose counters a node process rewrites
// to a stats file every second. After the run the harness reads the
// ledgers and counters, never the scheduler's own tables. Each run creates
// its own database next to the one --dsn names (with chaos --clock-step
// or --patroni, on its private server or cluster) and drops it afterwards.
package harness
