// Package repository holds the domain types of easy-job (tasks, nodes,
// executions and their statuses) and the Store interface the node runtime
// talks to. Implementations live in the postgres and memory subpackages;
// storetest holds the conformance suite both must pass.
//
// Every write that depends on a claim is fenced: it names the task id, the
// version the claimer last saw and the claimer's node id, and affects
// nothing (reporting ErrClaimLost) when any of them no longer matches.
package repository
