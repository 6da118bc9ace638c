package pgtest

import (
	"context"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SilentPath is a TCP relay between tests and the test server that can go
// silent the way a network path does when a NAT or conntrack table is
// flushed or a virtual IP moves: from Silence on, every byte in either
// direction vanishes, yet no socket is closed or reset, so a client's read
// waits for an answer that never comes. New connections are accepted and
// then hear nothing. Heal lets new connections through again; those that
// lost bytes stay silent (their protocol stream is broken), as they would
// on a real path, and only a client that gives them up recovers.
type SilentPath struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	silent  bool
	refused bool
	conns   []net.Conn
	wg      sync.WaitGroup
}

// NewSilentPath starts a relay to the host and port of dsn and returns
// it with dsn rewritten to go through it. It is closed when tb ends.
func NewSilentPath(tb testing.TB, dsn string) (*SilentPath, string) {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatalf("pgtest: parse dsn: %v", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(tb.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("pgtest: listen: %v", err)
	}
	p := &SilentPath{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), conns: []net.Conn{}}
	p.wg.Go(p.accept)
	tb.Cleanup(p.close)
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		tb.Fatalf("pgtest: SilentPath needs a URL DSN, got %q", dsn)
	}
	u.Host = ln.Addr().String()
	return p, u.String()
}

// Silence drops every byte from now on, on every connection, open or new.
func (p *SilentPath) Silence() { p.set(true) }

// Refuse closes every new connection at once, as a server that is down
// (a refused connect) looks to a client; Heal ends it.
func (p *SilentPath) Refuse() {
	p.mu.Lock()
	p.refused = true
	p.mu.Unlock()
}

// Heal lets new connections through again (see SilentPath).
func (p *SilentPath) Heal() {
	p.mu.Lock()
	p.silent, p.refused = false, false
	p.mu.Unlock()
}

func (p *SilentPath) set(silent bool) {
	p.mu.Lock()
	p.silent = silent
	p.mu.Unlock()
}

func (p *SilentPath) isRefused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func (p *SilentPath) isSilent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}

func (p *SilentPath) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false // closed
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *SilentPath) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Go(func() { p.relay(c) })
	}
}

// relay connects c to the server, unless the path is silent: then c
// hears nothing, ever.
func (p *SilentPath) relay(c net.Conn) {
	if p.isRefused() {
		_ = c.Close()
		return
	}
	if p.isSilent() {
		p.pump(c, io.Discard)
		return
	}
	s, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(s) {
		_ = s.Close()
		return
	}
	p.wg.Go(func() { p.pump(s, c) })
	p.pump(c, s)
}

// pump copies from src to dst until src ends; while the path is silent,
// and for good once a byte was dropped, it reads and drops.
func (p *SilentPath) pump(src io.Reader, dst io.Writer) {
	buf := make([]byte, 32<<10)
	lost := false
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if lost || p.isSilent() {
				lost = true
			} else if _, werr := dst.Write(buf[:k]); werr != nil {
				lost = true
			}
		}
		if err != nil {
			return
		}
	}
}

// close stops the relay and closes every connection it made.
func (p *SilentPath) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	p.wg.Wait()
}
