package harness

import (
	"strings"
	"testing"
)

func TestHAProxyConfig(t *testing.T) {
	members := []*patroniMember{{name: "pg1", pgPort: 5433, restPort: 8008}, {name: "pg2", pgPort: 5434, restPort: 8009}}
	cfg := haproxyConfig(6432, members)
	for _, want := range []string{
		"    mode tcp\n", "    bind 127.0.0.1:6432\n",
		"    option httpchk GET /primary\n", "    http-check expect status 200\n",
		"inter 1000ms fastinter 250ms downinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions observe layer4 error-limit 1 on-error mark-down\n",
		"    option redispatch 1\n", "    timeout client 1800000ms\n",
		"    server pg1 127.0.0.1:5433 maxconn 500 check port 8008\n",
		"    server pg2 127.0.0.1:5434 maxconn 500 check port 8009\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("haproxy.cfg lacks %q:\n%s", want, cfg)
		}
	}
}

func TestFaultKindsPgBouncer(t *testing.T) {
	kinds := faultKinds(chaosOpts{pgbouncer: true})
	if kinds[len(kinds)-1] != "pgbouncer-restart" {
		t.Fatalf("fault kinds with --pgbouncer: %v", kinds)
	}
	for _, k := range []string{"pg-restart", "pg-stop", "silent-path", "pgbouncer-restart"} {
		if !isDBOutage(k) {
			t.Errorf("%s is not a database outage", k)
		}
	}
	if isDBOutage("kill") {
		t.Error("kill is a database outage")
	}
}
