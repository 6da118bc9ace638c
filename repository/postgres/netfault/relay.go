// Package netfault is a TCP relay between clients and a PostgreSQL server
// that plays the network faults a reset does not announce: a path that
// goes silent (a NAT or conntrack flush, a moved virtual IP: packets
// vanish, sockets stay open) and a server that refuses connections. The
// tests (repository/postgres/pgtest.SilentPath) and the chaos harness
// (easyjob chaos --silent-path) put it between the nodes and the server.
package netfault

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Relay forwards TCP connections to one server. From Silence on, every
// byte in either direction is dropped, on every connection, open or new,
// and no socket is closed or reset: a client's read waits for an answer
// that never comes. Refuse closes new connections at once. Heal lets new
// connections through again; those that lost bytes stay silent (their
// protocol stream is broken), as they would on a real path, and only a
// client that gives them up recovers.
type Relay struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	silent  bool
	refused bool
	conns   []net.Conn // nil once closed
	wg      sync.WaitGroup
}

// Listen starts a relay on 127.0.0.1 to the host and port of dsn and
// returns it with dsn rewritten to go through it (a URL DSN).
func Listen(ctx context.Context, dsn string) (*Relay, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("netfault: parse dsn: %w", err)
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return nil, "", fmt.Errorf("netfault: a URL DSN is needed (postgres://...)")
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("netfault: listen: %w", err)
	}
	r := &Relay{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), conns: []net.Conn{}}
	r.wg.Go(r.accept)
	u.Host = ln.Addr().String()
	return r, u.String(), nil
}

// Silence drops every byte from now on, on every connection, open or new.
func (r *Relay) Silence() { r.set(func() { r.silent = true }) }

// Refuse closes every new connection at once, as a server that is down
// looks to a client.
func (r *Relay) Refuse() { r.set(func() { r.refused = true }) }

// Heal lets new connections through again.
func (r *Relay) Heal() { r.set(func() { r.silent, r.refused = false, false }) }

func (r *Relay) set(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
}

func (r *Relay) state() (silent, refused bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.silent, r.refused
}

func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		return false // closed
	}
	r.conns = append(r.conns, c)
	return true
}

func (r *Relay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			_ = c.Close()
			return
		}
		r.wg.Go(func() { r.relay(c) })
	}
}

// relay connects c to the server, unless the path is silent (c then hears
// nothing, ever) or refused.
func (r *Relay) relay(c net.Conn) {
	silent, refused := r.state()
	switch {
	case refused:
		_ = c.Close()
		return
	case silent:
		r.pump(c, io.Discard)
		return
	}
	s, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", r.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !r.track(s) {
		_ = s.Close()
		return
	}
	r.wg.Go(func() {
		r.pump(s, c)
		_ = c.Close()
	})
	r.pump(c, s)
	// The client gave the connection up: so does the server's end. (On a
	// real path the server learns it from its own TCP keepalives, which
	// should be set: tcp_keepalives_idle, tcp_user_timeout.)
	_ = s.Close()
}

// pump copies from src to dst until src ends; while the path is silent,
// and for good once a byte was dropped, it reads and drops.
func (r *Relay) pump(src io.Reader, dst io.Writer) {
	buf := make([]byte, 32<<10)
	lost := false
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if silent, _ := r.state(); lost || silent {
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

// Close stops the relay, closes every connection it made and waits for
// its goroutines.
func (r *Relay) Close() {
	_ = r.ln.Close()
	r.mu.Lock()
	conns := r.conns
	r.conns = nil
	r.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	r.wg.Wait()
}
