// Package prom exports what easyjob nodes do as Prometheus metrics.
//
// New registers the metrics on a registry of yours and returns an
// observe.Observer; set it as Config.Observer of every Scheduler of the
// process (one Observer per registry: a second New on the same registry
// fails with an error wrapping prometheus.AlreadyRegisteredError; a nil
// registry fails with ErrNilRegisterer). Observing costs a few atomic
// adds per event and allocates nothing once a task has been seen; it
// wraps each run (StartRun) in one context, which carries a chain root's
// interval to its steps.
//
// Every replica is a scrape target; series carry the labels group and
// task (where the metric is per task) and the ones named below:
//
//	easyjob_fires_total{group,task,trigger}            counter  trigger: cron, retry, misfire, chain
//	easyjob_runs_total{group,task,status}              counter  status: succeeded, failed, timed_out
//	easyjob_start_lag_seconds{group}                   histogram 5 ms – 60 s, every fire
//	easyjob_run_duration_seconds{group,task}           histogram 10 ms – 1 h
//	easyjob_claims_total{group,result}                 counter  result: won, lost, stolen (stolen ⊂ won)
//	easyjob_recoveries_total{group}                    counter  tasks of dead nodes this replica recovered
//	easyjob_recovery_delay_seconds{group}              histogram how long a recovered task had been due
//	easyjob_misfires_total{group,task,policy}          counter  policy: the misfire action applied
//	easyjob_handovers_total{group}                     counter  claims handed to a peer by a finish
//	easyjob_heartbeat_failures_total{group}            counter
//	easyjob_store_operation_duration_seconds{group,op} histogram one per store method (listen: a session)
//	easyjob_nodes{group,state}                         gauge    state: live (and leaving, suspect, dead with WithNodes)
//	easyjob_claims_held{group}                         gauge    claims this replica holds
//	easyjob_workers_busy{group}                        gauge    jobs running on this replica
//	easyjob_task_last_success_timestamp_seconds{group,task} gauge  end of the last successful run here
//	easyjob_task_interval_seconds{group,task}          gauge    longest gap between fires of the task's cron (a chain step: its root's)
//	easyjob_build_info{version,goversion}              gauge    always 1
//	easyjob_nodes_scrape_errors_total                  counter  failed node table reads (WithNodes)
//
// A task's series appear when it first fires on the replica:
// easyjob_runs_total with status succeeded and failed at zero (so that
// increase() sees the first failure), a trigger's or another status's
// series at its first occurrence, easyjob_task_last_success_timestamp_seconds
// at the first success. The op label is the store method in snake_case:
// DueTasks → due_tasks, Finish → finish, CancelsSince → cancels_since.
//
// # Series count
//
// Per task a replica exports 20 series: fires (1 trigger, usually),
// runs (succeeded and failed), the duration histogram (12 buckets, +Inf,
// _sum, _count), last success and interval. Options bound them
// (TestSeriesCount counts them: a group of 10 000 tasks with 32 store
// methods; ten replicas that each ran every task export ten times as
// many):
//
//	options                                    per task  per group  10 000 tasks  × 10 replicas
//	(none)                                           20        586       200 586      2 005 860
//	WithoutDurationBuckets                            7        586        70 586        705 860
//	WithoutTaskLabel                                  2        604        20 604        206 040
//	WithoutTaskLabel, WithoutTaskGauges               0        604           604          6 040
//	the three                                         0        591           591          5 910
//
// WithoutTaskLabel keeps the dead-man pair (last success, interval) per
// task; WithoutTaskGauges drops it. A task removed by a node
// (observe.EventTaskRemoved: stale past StaleTaskExpiry) loses its
// series at once; WithTaskTTL deletes those of a task idle on this
// replica (moved to a peer, a deleted runtime schedule). The gauges
// claims_held, workers_busy and nodes{state="live"} come with heartbeats
// (each replica reports its own claims and its own view of the live set;
// aggregate with sum and max). With WithNodes(client) easyjob_nodes counts
// the rows of the node table by state at scrape time instead: one
// Client.Nodes call (three short queries) per scrape, at most every 5 s,
// bounded by WithScrapeTimeout; every replica then reports the same
// numbers, so aggregate with max.
//
// # Alerting
//
// A task that has not succeeded within 3 of its intervals (the replicas
// that ran it report its last success; max takes the newest):
//
//	groups:
//	  - name: easyjob
//	    rules:
//	      - alert: EasyjobTaskNotSucceeding
//	        expr: |
//	          time() - max by (group, task) (easyjob_task_last_success_timestamp_seconds)
//	            > 3 * max by (group, task) (easyjob_task_interval_seconds)
//	        for: 1m
//	        annotations:
//	          summary: "easyjob task {{ $labels.task }} ({{ $labels.group }}) has not succeeded for 3 intervals"
//
// A task that never succeeded since the replicas started has no last
// success series; alert on its failures instead:
//
//	increase(easyjob_runs_total{status!="succeeded"}[15m]) > 0
//	  unless on (group, task) increase(easyjob_runs_total{status="succeeded"}[15m]) > 0
//
// Chain steps (no cron of their own) carry their root's interval, so the
// same alert covers them.
//
// Start lag (p99 over 5 minutes, all replicas):
//
//	histogram_quantile(0.99, sum by (group, le) (rate(easyjob_start_lag_seconds_bucket[5m]))) > 1
package prom
