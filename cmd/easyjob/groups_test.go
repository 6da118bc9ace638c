package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/easyjob-go/easyjob/easyjob/dashboard"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// seedGroups writes one task per name into each group of a fresh
// database and returns its DSN.
func seedGroups(t *testing.T, groups map[string][]string) string {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	store := pgtest.OpenStore(t, dsn)
	ctx := t.Context()
	now, err := store.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for g, names := range groups {
		var defs []repository.TaskDef
		for _, n := range names {
			defs = append(defs, repository.TaskDef{Name: n, Cron: "0 0 3 * * *", NextStartTime: now.Add(time.Hour)})
		}
		if _, err := store.UpsertTasks(ctx, g, defs); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

// TestGroupsCLI: `easyjob groups` lists every group; --group may be left
// out when the database holds one group, and not when it holds several.
func TestGroupsCLI(t *testing.T) {
	bin := buildCLI(t)
	one := &cli{t: t, bin: bin, dsn: seedGroups(t, map[string][]string{"solo": {"a", "b"}})}
	r := one.run("tasks").want(t, 0, "tasks without --group, one group")
	if !strings.Contains(r.stdout, "a") || !strings.Contains(one.run("status").stdout, "group solo") {
		t.Errorf("tasks of the only group: %s", r.stdout)
	}

	many := &cli{t: t, bin: bin, dsn: seedGroups(t, map[string][]string{"billing": {"invoice", "dunning"}, "mail": {"digest"}})}
	r = many.run("pause", "invoice").want(t, exitUsage, "pause without --group, two groups")
	if !strings.Contains(r.stderr, "billing, mail") || !strings.Contains(r.stderr, "--group") {
		t.Errorf("the error does not list the groups: %s", r.stderr)
	}
	many.run("pause", "invoice", "--group", "billing").want(t, 0, "pause with --group")

	r = many.run("groups").want(t, 0, "groups")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "GROUP") || !strings.HasPrefix(lines[1], "billing") ||
		strings.Fields(lines[1])[1] != "2" || strings.Fields(lines[1])[3] != "1" || !strings.HasPrefix(lines[2], "mail") {
		t.Errorf("groups table:\n%s", r.stdout)
	}
	r = many.run("groups", "--json").want(t, 0, "groups --json")
	var v struct {
		Groups []dashboard.GroupSummary `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || len(v.Groups) != 2 || v.Groups[0].Group != "billing" ||
		v.Groups[0].Tasks != 2 || v.Groups[0].Paused != 1 || v.Groups[1].Tasks != 1 {
		t.Errorf("groups --json: %v\n%s", err, r.stdout)
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "easyjob test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestDashboardTLSUsers serves every group over HTTPS to a viewer from a
// users file and an operator from the environment: the viewer reads and
// may not act, the operator acts and is the audit log's actor.
func TestDashboardTLSUsers(t *testing.T) {
	dsn := seedGroups(t, map[string][]string{"billing": {"invoice"}, "mail": {"digest"}})
	certFile, keyFile, pool := writeCert(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("look"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(users, []byte("# who may sign in\nvera:viewer:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envDashUser, "olga")
	t.Setenv(envDashPassword, "act!")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr strings.Builder
	ready, done := make(chan string, 1), make(chan int, 1)
	go func() {
		done <- runDashboard(ctx, []string{"--dsn", dsn, "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile,
			"--users", users}, &stdout, &stderr, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("dashboard exited %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("dashboard did not start")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	do := func(method, path, user, pass string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, "https://"+addr+path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := do(http.MethodGet, "/groups", "vera", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", code)
	}
	code, body := do(http.MethodGet, "/groups", "vera", "look")
	if code != http.StatusOK || !strings.Contains(body, `data-group="billing"`) || !strings.Contains(body, `data-group="mail"`) {
		t.Fatalf("viewer's /groups: %d\n%s", code, body)
	}
	if code, body = do(http.MethodGet, "/g/billing/task?name=invoice", "vera", "look"); code != http.StatusOK || strings.Contains(body, `value="pause"`) {
		t.Errorf("viewer's task page: %d, want no action buttons", code)
	}
	if code, _ = do(http.MethodPost, "/g/billing/api/v1/tasks/invoice/pause", "vera", "look"); code != http.StatusForbidden {
		t.Errorf("viewer's pause: %d, want 403", code)
	}
	if code, body = do(http.MethodGet, "/g/billing/task?name=invoice", "olga", "act!"); code != http.StatusOK || !strings.Contains(body, `value="pause"`) {
		t.Errorf("operator's task page: %d, want the pause button", code)
	}
	if code, body = do(http.MethodPost, "/g/billing/api/v1/tasks/invoice/pause", "olga", "act!"); code != http.StatusOK {
		t.Errorf("operator's pause: %d %s", code, body)
	}
	code, body = do(http.MethodGet, "/g/billing/api/v1/audit", "vera", "look")
	if code != http.StatusOK || !strings.Contains(body, `"name":"olga"`) || !strings.Contains(body, `"action":"pause"`) {
		t.Errorf("billing's audit log: %d %s, want olga's pause", code, body)
	}
	if !strings.Contains(stdout.String(), "https://") || !strings.Contains(stdout.String(), "every group") {
		t.Errorf("start line: %s", stdout.String())
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}

// TestDashboardFlagErrors: TLS and users mistakes are usage errors.
func TestDashboardFlagErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(bad, []byte("amy:admin:$2a$10$xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "c.pem"}, "both --tls-cert and --tls-key"},
		{[]string{"--tls-key", "k.pem"}, "both --tls-cert and --tls-key"},
		{[]string{"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"}, "--tls-cert/--tls-key"},
		{[]string{"--users", bad}, "line 1"},
		{[]string{"--users", "/nonexistent/users"}, "--users"},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"--dsn", "postgres://127.0.0.1:1/x", "--addr", "127.0.0.1:0"}, c.args...)
		code := runDashboard(t.Context(), args, &stdout, &stderr, nil)
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d mentioning %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}
