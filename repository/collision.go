package repository

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A node publishes, beside the names it registered, one fingerprint per
// name: what code registers it (the service's module and the job
// function). Two nodes of a group that register one name with different
// fingerprints are two services that collide (both call a task
// "cleanup" in the default group, so each node runs only its own
// service's job, and the other's fires run the wrong code or never), or
// a deploy that changes the task's code.

// fingerprintSep joins a name and its fingerprint in a task set entry;
// task names cannot hold it (control characters are refused).
const fingerprintSep = "\x1f"

// TaskSetEntries returns the entries a node publishes for the names it
// registered and their fingerprints ("" for none).
func TaskSetEntries(fingerprints map[string]string) []string {
	out := make([]string, 0, 2*len(fingerprints))
	for name, fp := range fingerprints {
		out = append(out, name)
		if fp != "" {
			out = append(out, name+fingerprintSep+fp)
		}
	}
	slices.Sort(out)
	return out
}

// Fingerprint returns the fingerprint the node published for name.
func (n NodeTasks) Fingerprint(name string) (string, bool) {
	fp, ok := n.fps[name]
	return fp, ok
}

// Collision is a task name that live nodes of a group register with
// different code.
type Collision struct {
	Name string
	// Nodes lists, per fingerprint, the live nodes that registered it.
	Nodes map[string][]Node
}

// Collisions finds the names that live registers with more than one
// fingerprint, by name. A node that published none is left out.
func Collisions(live []NodeTasks) []Collision {
	by := map[string]map[string][]Node{}
	for _, n := range live {
		for name, fp := range n.fps {
			if by[name] == nil {
				by[name] = map[string][]Node{}
			}
			by[name][fp] = append(by[name][fp], n.Node)
		}
	}
	var out []Collision
	for name, fps := range by {
		if len(fps) > 1 {
			out = append(out, Collision{Name: name, Nodes: fps})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Describe says which nodes register the name how, for a log line or a
// banner: "node 3 (billing-7f9c), node 4 (billing-1a2b) vs node 5 (shipping-x)".
func (c Collision) Describe() string {
	fps := make([]string, 0, len(c.Nodes))
	for fp := range c.Nodes {
		fps = append(fps, fp)
	}
	slices.Sort(fps)
	parts := make([]string, len(fps))
	for i, fp := range fps {
		var ns []string
		for _, n := range c.Nodes[fp] {
			ns = append(ns, "node "+strconv.FormatInt(int64(n.ID), 10)+" ("+n.Name+")")
		}
		parts[i] = strings.Join(ns, ", ") + " [" + fp + "]"
	}
	return strings.Join(parts, " vs ")
}

// splitEntry splits a task set entry into a name and a fingerprint.
func splitEntry(e string) (name, fp string, isFP bool) {
	name, fp, isFP = strings.Cut(e, fingerprintSep)
	return name, fp, isFP
}
