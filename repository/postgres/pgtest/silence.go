package pgtest

import (
	"testing"

	"github.com/easyjob-go/easyjob/repository/postgres/netfault"
)

// SilentPath is a relay between tests and the test server that can go
// silent the way a network path does, or refuse connections
// (netfault.Relay).
type SilentPath = netfault.Relay

// NewSilentPath starts a relay to the host and port of dsn and returns
// it with dsn rewritten to go through it. It is closed when tb ends.
func NewSilentPath(tb testing.TB, dsn string) (*SilentPath, string) {
	tb.Helper()
	r, via, err := netfault.Listen(tb.Context(), dsn)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(r.Close)
	return r, via
}
