package harness

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfile starts a CPU profile of this node process written to
// prefix.<pid> (EASYJOB_NODE_CPUPROFILE), for finding where a node spends
// its time under bench load; nothing when prefix is empty.
func cpuProfile(prefix string) (stop func(), err error) {
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
