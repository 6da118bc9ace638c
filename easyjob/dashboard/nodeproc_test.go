package dashboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
)

// nodeEnv, set to "dsn|group|name", makes the test binary one node
// process (see TestMain): a real node of the browser test's cluster.
const nodeEnv = "EASYJOB_DASHBOARD_TEST_NODE"

// The browser test's tasks (every node registers all of them).
const (
	scriptName = `<script>window.pwned=1</script>`
	imgName    = `<img src=x onerror="window.pwned=2">`
)

// runNodeProcess runs one node until SIGTERM or SIGINT; it returns the
// exit status.
func runNodeProcess(spec string) int {
	parts := strings.SplitN(spec, "|", 3)
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "%s: want dsn|group|name, got %q\n", nodeEnv, spec)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	s, err := easyjob.New(easyjob.Config{DSN: parts[0], Group: parts[1], NodeName: parts[2], SkipMigrate: true, Strategy: "id_hash"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ok := func(context.Context) error { return nil }
	slow := func(ctx context.Context) error {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	flaky := func(ctx context.Context) error {
		if info, _ := easyjob.InfoFromContext(ctx); info.ScheduledAt.Second()%2 == 1 {
			return errors.New(`flaky: upstream said <b>no</b>`)
		}
		return nil
	}
	for _, r := range []struct {
		name, cron string
		fn         easyjob.Func
		opts       []easyjob.Option
	}{
		{"tick", "*/2 * * * * *", ok, nil},
		{"tick-mail", "", ok, []easyjob.Option{easyjob.Parent("tick")}},
		{"tick-archive", "", ok, []easyjob.Option{easyjob.Parent("tick-mail")}},
		{"flaky", "*/3 * * * * *", flaky, nil},
		{"slow", "*/4 * * * * *", slow, []easyjob.Option{easyjob.Timeout(10 * time.Second)}},
		{"pausable", "* * * * * *", ok, nil},
		{"manual", "0 0 0 1 1 *", ok, nil},
		{scriptName, "*/5 * * * * *", ok, nil},
		{imgName, "*/5 * * * * *", ok, nil},
	} {
		if err := s.Register(r.name, r.cron, r.fn, r.opts...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// The handler kind of the browser test's schedule created from the form.
	if err := s.Handle("echo", easyjob.HandlerOf(func(context.Context, echoArgs) error { return nil })); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// nodeProc is a node process of the browser test.
type nodeProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// startNode starts this test binary as node name of group on dsn; it
// logs to dir and is stopped (SIGTERM, then SIGKILL) when t ends.
func startNode(t *testing.T, dsn, group, name, dir string) *nodeProc {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	// A context that is never cancelled: t.Context ends before the cleanup
	// below, which stops the node gracefully (SIGTERM) instead of killing it.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nodeEnv+"="+dsn+"|"+group+"|"+name)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// kill SIGKILLs the node and waits for it.
func (p *nodeProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}
