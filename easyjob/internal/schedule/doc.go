// Package schedule computes fire times: cron expressions (over
// adhocore/gronx, with seconds) and "@every" intervals in a time zone,
// the misfire policy applied to a fire found late, and the backoff of
// retries. It does no I/O and reads no clock but the times it is given.
package schedule
