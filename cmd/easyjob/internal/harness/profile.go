package harness

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
)

// nodeProfiles starts what the environment asks for in this node process,
// for finding where a node spends its time under bench load: a CPU
// profile written to $EASYJOB_NODE_CPUPROFILE.<pid> (sampled at
// $EASYJOB_NODE_CPUPROFILE_HZ if set; with a trace, the samples go into
// it too) and an execution
// trace (the goroutine and GC timeline of every burst) to
// $EASYJOB_NODE_TRACE.<pid>, and the allocations of the whole run (a heap
// profile, read with -sample_index=alloc_space) to
// $EASYJOB_NODE_MEMPROFILE.<pid>. The returned stop flushes them.
func nodeProfiles() (stop func(), err error) {
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	if prefix := os.Getenv("EASYJOB_NODE_CPUPROFILE"); prefix != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if hz, err := strconv.Atoi(os.Getenv("EASYJOB_NODE_CPUPROFILE_HZ")); err == nil && hz > 0 {
			// Above pprof's 100 Hz, so that a burst of a few tens of
			// milliseconds gets samples enough (the runtime warns, once).
			runtime.SetCPUProfileRate(hz)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); _ = f.Close() })
	}
	if prefix := os.Getenv("EASYJOB_NODE_TRACE"); prefix != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
		if err != nil {
			stopAll()
			return nil, fmt.Errorf("trace: %w", err)
		}
		if err := trace.Start(f); err != nil {
			_ = f.Close()
			stopAll()
			return nil, fmt.Errorf("trace: %w", err)
		}
		stops = append(stops, func() { trace.Stop(); _ = f.Close() })
	}
	if prefix := os.Getenv("EASYJOB_NODE_MEMPROFILE"); prefix != "" {
		path := fmt.Sprintf("%s.%d", prefix, os.Getpid())
		stops = append(stops, func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		})
	}
	return stopAll, nil
}

// creationProfile profiles the harness's own process while it creates a
// run's schedules (bench --schedules), to $EASYJOB_BENCH_CPUPROFILE when
// set: the client's share of a schedule's creation. The returned stop
// flushes it.
func creationProfile() (stop func()) {
	path := os.Getenv("EASYJOB_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "easyjob bench: creation profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "easyjob bench: creation profile: %v\n", err)
		_ = f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}
