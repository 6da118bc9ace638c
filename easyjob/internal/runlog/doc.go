// Package runlog captures the lines a job logs through its context's
// logger (easyjob.Logger) so that they are stored with its run: a
// bounded buffer per run (Log) behind a log/slog handler (Handler). The
// lines past the bound are counted, not kept, so a chatty job costs its
// node a fixed amount of memory per run.
package runlog
