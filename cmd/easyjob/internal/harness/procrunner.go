package harness

import (
	"os"
	"time"
)

// procRunner runs the nodes as OS processes of this binary (see
// procCluster).
type procRunner struct {
	c     *procCluster
	slots int
}

// startProcRunner starts o.nodes node processes with p; their ledgers,
// stats and logs go to a new directory under o.dir.
func startProcRunner(o benchOpts, p nodeParams) (*procRunner, error) {
	dir, err := os.MkdirTemp(o.dir, o.label+"-")
	if err != nil {
		return nil, err
	}
	c, err := newProcCluster(dir, p, o.nodes)
	if err != nil {
		return nil, err
	}
	// The bench kills no node: its ledgers may buffer (see fileLedger).
	c.extra = []string{"--log-level", o.logLevel, "--ledger-flush", "100ms"}
	r := &procRunner{c: c, slots: o.nodes}
	for i := range o.nodes {
		if i > 0 && o.stagger > 0 {
			time.Sleep(o.stagger)
		}
		if _, err := c.start(i); err != nil {
			c.stopAll(10 * time.Second)
			return nil, err
		}
	}
	return r, nil
}

func (r *procRunner) fireCount() int { return r.c.poll() }

func (r *procRunner) running() int {
	k := 0
	for _, inc := range r.c.current() {
		if inc != nil {
			k++
		}
	}
	return k
}

func (r *procRunner) snapshot() []storeStats {
	incs := r.c.all()
	out := make([]storeStats, len(incs))
	for i, inc := range incs {
		out[i], _ = inc.stats()
	}
	return out
}

func (r *procRunner) stop() { r.c.stopAll(40 * time.Second) }

func (r *procRunner) results() ([]fire, []nodeResult) {
	r.c.poll()
	fires := r.c.fires()
	incs := r.c.all()
	nodes := make([]nodeResult, len(incs))
	for i, inc := range incs {
		st, _ := inc.stats()
		cpu, rss, _ := inc.rusage()
		if st.PeakRSSBytes > 0 {
			rss = st.PeakRSSBytes // see storeStats.PeakRSSBytes
		}
		exit := ""
		if info := inc.exitInfo(); info != "exit status 0" {
			exit = info
		}
		nodes[i] = nodeResult{
			Name: inc.Name, NodeIDs: st.NodeIDs, RoundTrips: st.RoundTrips(), ClaimConflicts: st.Conflicts(),
			FencedFinishes: st.FencedFinish + st.StartLost, Exit: exit, final: st, CPUSeconds: cpu, PeakRSSBytes: rss,
		}
		for _, f := range fires {
			if f.Proc == inc.Idx {
				nodes[i].Fires++
			}
		}
	}
	return fires, nodes
}
