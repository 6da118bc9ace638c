package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// TaskSetID identifies a set of task names: the hex SHA-256 (first 128
// bits) of the sorted, de-duplicated names. A node publishes the set of
// names it registered under this id and carries the id in its row
// (Node.TaskSet); nodes running the same code share one id.
func TaskSetID(names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	h := sha256.New()
	for _, n := range sorted {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
