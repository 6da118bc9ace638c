package repository

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"time"
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

// NodeTasks is a live node with the names it registered.
type NodeTasks struct {
	Node Node
	// names registered; nil when the node published no set (or one the
	// store does not hold): it then counts as registering every task.
	names map[string]bool
	fps   map[string]string // fingerprint per name (collision.go)
}

// Registers reports whether the node registered the task name.
func (n NodeTasks) Registers(name string) bool { return n.names == nil || n.names[name] }

// LiveTaskSets lists the live nodes of group with their task sets.
func LiveTaskSets(ctx context.Context, store NodeReader, group string, liveAfter time.Duration) ([]NodeTasks, error) {
	live, err := store.LiveNodes(ctx, group, liveAfter)
	if err != nil {
		return nil, err
	}
	type parsed struct {
		names map[string]bool
		fps   map[string]string
	}
	sets := map[string]parsed{}
	out := make([]NodeTasks, len(live))
	for i, n := range live {
		out[i].Node = n
		if n.TaskSet == "" {
			continue
		}
		set, ok := sets[n.TaskSet]
		if !ok {
			entries, err := store.TaskSet(ctx, n.TaskSet)
			if err != nil && !errors.Is(err, ErrTaskSetNotFound) {
				return nil, err
			}
			if err == nil {
				set = parsed{names: make(map[string]bool, len(entries)), fps: map[string]string{}}
				for _, e := range entries {
					if name, fp, isFP := splitEntry(e); isFP {
						set.fps[name] = fp
					} else {
						set.names[name] = true
					}
				}
			}
			sets[n.TaskSet] = set
		}
		out[i].names, out[i].fps = set.names, set.fps
	}
	return out, nil
}

// StaleTest returns the test "no live node of the group registers this
// name". extra names count as registered (a node's own, before its row
// carries them).
func StaleTest(ctx context.Context, store NodeReader, group string, liveAfter time.Duration, extra []string) (func(string) bool, error) {
	live, err := LiveTaskSets(ctx, store, group, liveAfter)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		if slices.Contains(extra, name) {
			return false
		}
		for _, n := range live {
			if n.Registers(name) {
				return false
			}
		}
		return true
	}, nil
}
