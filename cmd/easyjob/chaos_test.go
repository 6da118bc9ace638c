package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/dsn"
)

// chaosReport is the part of the `easyjob chaos --json` output TestChaos
// reads.
type chaosReport struct {
	Fires          int                `json:"fires"`
	Faults         []json.RawMessage  `json:"faults"`
	Failover       map[string]float64 `json:"failover"`
	Duplicates     int                `json:"duplicates"`
	AllowedReruns  int                `json:"allowed_reruns"`
	Lost           int                `json:"lost_fires"`
	FencedFinishes int64              `json:"fenced_finishes"`
	Failed         bool               `json:"failed"`
	FailureReasons []string           `json:"failure_reasons"`
	Overlap        *struct {
		Tasks, Runs int
	} `json:"overlap"`
}

// TestChaos builds the binary and runs a ~60 s chaos with 3 node processes
// on the PostgreSQL of EASYJOB_DSN (or EASYJOB_TEST_DSN, else the local
// default). It runs only when EASYJOB_CHAOS=1 (about 70 s in all):
//
//	EASYJOB_CHAOS=1 go test -run TestChaos -v -timeout 5m ./cmd/easyjob
func TestChaos(t *testing.T) {
	if os.Getenv("EASYJOB_CHAOS") != "1" {
		t.Skip("set EASYJOB_CHAOS=1 to run the 60 s chaos test")
	}
	server := os.Getenv("EASYJOB_DSN")
	if server == "" {
		server = os.Getenv("EASYJOB_TEST_DSN")
	}
	if server == "" {
		server = dsn.Default
	}
	bin := filepath.Join(t.TempDir(), "easyjob")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "chaos", "--dsn", server, "--procs", "3", "--tasks", "100",
		"--overlap-tasks", "10", "--duration", "60s", "--quiet", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res chaosReport
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		t.Fatalf("chaos: %v; output not JSON (%v):\n%s\nstderr:\n%s", err, jerr, stdout.String(), stderr.String())
	}
	t.Logf("fires %d, faults %d, failover %v, duplicates %d (allowed %d), lost %d, fenced %d",
		res.Fires, len(res.Faults), res.Failover, res.Duplicates, res.AllowedReruns, res.Lost, res.FencedFinishes)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("chaos did not run: %v\n%s", err, stderr.String())
	}
	if res.Failed || err != nil {
		t.Fatalf("chaos failed (%v): %v\n%s\nstderr:\n%s", err, res.FailureReasons, stdout.String(), stderr.String())
	}
	if res.Fires == 0 || len(res.Faults) < 3 || res.Overlap == nil || res.Overlap.Tasks != 10 || res.Overlap.Runs == 0 {
		t.Fatalf("chaos ran too little: %d fires, %d faults, overlap tasks %+v", res.Fires, len(res.Faults), res.Overlap)
	}
}
