package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// HAProxy in front of the Patroni cluster (--patroni-via haproxy): one
// TCP port that leads to the member whose Patroni REST API answers 200 on
// GET /primary, as Patroni's documentation sets it up. A member marked
// down has its sessions cut (on-marked-down shutdown-sessions), so that no
// node keeps writing to a demoted primary.
//
// A connection refused by a member's port marks the member down at once
// (observe layer4 error-limit 1 on-error mark-down), and a retried
// connect goes to another member (option redispatch 1). Without both, a
// switchover cost the nodes about 3 s more than the failover itself:
// Patroni stops the old primary's PostgreSQL before its REST API stops
// answering 200 on /primary, and every connect in that window went to
// the stopped port and waited out HAProxy's retries (3, a second apart)
// before failing; the nodes' outage passed DeadAfter, they dropped their
// claims, and fires resumed 4.2 s after the new primary took writes
// (through recovery) instead of within a second.
const (
	haproxyCheckInter = 1 * time.Second        // health check period while a member is up
	haproxyFastInter  = 250 * time.Millisecond // while its state is changing
	// haproxyDownInter is the check period of a member marked down: how
	// soon a promoted replica is seen. At 1 s, fires resumed 5.2 s after
	// a new leader took the writes of a lost one (patroni-kill): the
	// nodes' outage passed DeadAfter and they dropped every claim; at
	// 250 ms, 1.4 s.
	haproxyDownInter = 250 * time.Millisecond
	haproxyFall      = 2 // failed checks that mark a member down
	haproxyRise      = 1 // passed checks that mark it up
	// haproxyTimeout is the idle timeout of a session: above the nodes'
	// pools' idle time (5 minutes), so HAProxy never cuts a pooled
	// connection the node still counts on.
	haproxyTimeout = 30 * time.Minute
)

// haproxyConfig renders haproxy.cfg: a listener on port whose servers are
// the members' PostgreSQL ports, checked on their REST ports.
func haproxyConfig(port int, members []*patroniMember) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    log stdout format iso local0 info
    maxconn 2000

defaults
    mode tcp
    log global
    option tcplog
    option dontlognull
    option dontlog-normal
    timeout connect 2s
    timeout client %[2]s
    timeout server %[2]s
    timeout check 2s
    retries 3
    option redispatch 1

listen postgres_primary
    bind 127.0.0.1:%[1]d
    option httpchk GET /primary
    http-check expect status 200
    default-server inter %[3]s fastinter %[4]s downinter %[5]s fall %[6]d rise %[7]d on-marked-down shutdown-sessions observe layer4 error-limit 1 on-error mark-down
`, port, haproxyDur(haproxyTimeout), haproxyDur(haproxyCheckInter), haproxyDur(haproxyFastInter), haproxyDur(haproxyDownInter), haproxyFall, haproxyRise)
	for _, m := range members {
		fmt.Fprintf(&b, "    server %s 127.0.0.1:%d maxconn 500 check port %d\n", m.name, m.pgPort, m.restPort)
	}
	return b.String()
}

// haproxyDur writes d in milliseconds, which HAProxy reads with an ms
// suffix.
func haproxyDur(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// findSbin finds a program on PATH, else in /usr/sbin (where Debian puts
// daemons; not on a non-root PATH).
func findSbin(prog string) (string, error) {
	if p, err := exec.LookPath(prog); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", prog)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found on PATH or in /usr/sbin", prog)
	}
	return p, nil
}

// startHAProxy starts HAProxy in front of c's members, checks its
// configuration first, and waits (30 s at most) until a write through it
// commits. It returns the DSN of the postgres database through it; c.stop
// stops it.
func (c *patroniCluster) startHAProxy(ctx context.Context) (string, error) {
	bin, err := findSbin("haproxy")
	if err != nil {
		return "", fmt.Errorf("%w: install Debian's haproxy package (apt-get install -y haproxy)", err)
	}
	port, err := freePort(ctx)
	if err != nil {
		return "", err
	}
	cfg := filepath.Join(c.dir, "haproxy.cfg")
	if err := c.writeFile(cfg, haproxyConfig(port, c.members)); err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, bin, "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("haproxy -c: %w: %s", err, strings.TrimSpace(string(out)))
	}
	// As this process's user: HAProxy needs no privilege to bind a high
	// port on loopback.
	p, err := startGroupProc([]string{bin, "-db", "-f", cfg}, c.haproxyLog(), nil, c.env())
	if err != nil {
		return "", err
	}
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	c.mu.Lock()
	c.haproxy, c.haproxyDSN = p, dsn
	c.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := probeWrite(wctx, dsn)
		if err == nil {
			return dsn, nil
		}
		select {
		case <-p.done:
			return "", fmt.Errorf("haproxy exited: %s", fileTail(c.haproxyLog(), 5))
		case <-wctx.Done():
			return "", fmt.Errorf("no write through haproxy on port %d: %w (log: %s)", port, errors.Join(wctx.Err(), err), fileTail(c.haproxyLog(), 5))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *patroniCluster) haproxyLog() string { return filepath.Join(c.dir, "haproxy.log") }
