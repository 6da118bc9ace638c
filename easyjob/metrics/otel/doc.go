// Package otel traces easyjob runs and records easyjob's metrics through
// the OpenTelemetry API, for services that export with OpenTelemetry
// instead of a Prometheus scrape (easyjob/metrics/prom).
//
// New returns an observe.RunObserver on the tracer and meter providers
// given (WithTracerProvider, WithMeterProvider; default the global ones);
// set it as Config.Observer of every Scheduler of the process. Close
// unregisters its gauge callback.
//
// # Traces
//
// One span per run, named after the task, following the FaaS
// conventions for timer triggers: faas.trigger=timer, faas.cron (the
// task's cron; none for a child that runs after its parent), faas.time
// (the scheduled time, RFC 3339 UTC), plus easyjob.group, easyjob.task,
// easyjob.node, easyjob.attempt, easyjob.trigger (cron, retry, misfire,
// chain), easyjob.misfire (the policy applied to a late fire) and, at the
// end, easyjob.status. A run that failed or timed out has status Error,
// error.type = its status and the error recorded as an event. A root run
// is a SERVER span that starts a new trace (Run's context may carry a
// span of the application's, which would otherwise parent every run); a
// chain child is an INTERNAL span, child of its parent's run, so a chain
// is one trace. The job's context carries the span: spans the job starts
// are its children.
//
// # Metrics
//
// The metrics of easyjob/metrics/prom, with OpenTelemetry names and units
// that the OpenTelemetry Prometheus exporter turns into the same names
// (easyjob.fires {fire} → easyjob_fires_total, easyjob.start_lag s →
// easyjob_start_lag_seconds) and attributes named like the labels (group,
// task, trigger, status, result, policy, state, op):
//
//	easyjob.fires, easyjob.runs, easyjob.claims, easyjob.recoveries,
//	easyjob.misfires, easyjob.handovers, easyjob.heartbeat_failures      counters
//	easyjob.start_lag, easyjob.run_duration, easyjob.recovery_delay,
//	easyjob.store_operation_duration                                     histograms (s, explicit buckets)
//	easyjob.nodes, easyjob.claims_held, easyjob.workers_busy,
//	easyjob.task_last_success_timestamp, easyjob.task_interval,
//	easyjob.build_info                                                   gauges (observed at collection)
//
// The op attribute is the store method in snake_case (Finish → finish,
// CancelsSince → cancels_since); a chain step's easyjob.task_interval is
// its root's. WithoutTaskLabel, WithoutTaskGauges and
// WithoutDurationBuckets bound the series as in easyjob/metrics/prom; a
// removed task (observe.EventTaskRemoved) and one idle past WithTaskTTL
// lose their gauges, and their counters and histogram too under delta
// temporality (the SDK keeps every cumulative series it has seen).
//
// WithNodes(client) makes easyjob.nodes count the node table's rows by
// state (live, leaving, suspect, dead) at collection time, as in
// easyjob/metrics/prom.
package otel
