// Package dispatch moves a node's claims from their fire time to a
// worker: the delay queue the boss waits on (one timer, no polling) and
// the bounded pool of workers that runs the fired claims, FIFO when all
// slots are busy.
package dispatch
