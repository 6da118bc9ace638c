package easyjob_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeMain returns the README's complete main.go: its first Go block
// that is a main package.
func readmeMain(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.HasPrefix(m[1], "package main\n") {
			return m[1]
		}
	}
	t.Fatal("README.md has no ```go block starting with package main")
	return ""
}

// goVersion returns the go directive of this module's go.mod.
func goVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// TestReadmeQuickStart does what a new user does: a fresh module outside
// the repository (its dependency on this checkout through a replace
// directive), the README's main.go pasted in, built, and run for a few
// seconds on the memory store. The jobs must fire and the program must
// stop cleanly on SIGINT.
func TestReadmeQuickStart(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/readme\n\ngo " + goVersion(t) + "\n\n" +
		"require github.com/easyjob-go/easyjob v0.0.0\n\n" +
		"replace github.com/easyjob-go/easyjob => " + checkout + "\n"
	for name, body := range map[string]string{"go.mod": gomod, "main.go": readmeMain(t)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "DATABASE_URL=")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "app", "."}} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a fresh module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	app := exec.CommandContext(ctx, filepath.Join(dir, "app"))
	app.Dir, app.Env = dir, env
	out, err := app.StderrPipe() // the log package writes to stderr
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(out); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	var log []string
	var reported, mailed bool
	timeout := time.After(20 * time.Second)
	for !reported || !mailed {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the program exited early: %v\n%s", app.Wait(), strings.Join(log, "\n"))
			}
			log = append(log, l)
			reported = reported || strings.Contains(l, "report for")
			mailed = mailed || strings.Contains(l, "report mailed")
		case <-timeout:
			_ = app.Process.Kill()
			t.Fatalf("no report and mail within 20 s:\n%s", strings.Join(log, "\n"))
		}
	}
	if err := app.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		log = append(log, l)
	}
	if err := app.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, strings.Join(log, "\n"))
	}
}
