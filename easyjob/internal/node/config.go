package node

import (
	"log/slog"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/internal/alerting"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
)

// Config is what a node runs with: the public easyjob.Config after its
// defaults and checks, as the runtime reads it. Its fields mean what the
// fields of the same names there document.
type Config struct {
	Group, NodeName, Strategy string
	Weight                    int

	HeartbeatInterval, LiveAfter, DeadAfter time.Duration
	RecoverInterval, PollInterval           time.Duration
	FetchWindow, StealAfter                 time.Duration
	Workers, MaxClaims                      int
	StartDeadline, ShutdownGrace            time.Duration
	NodeExpiry                              time.Duration

	HistoryMaxAge   time.Duration
	HistoryMaxRows  int
	StaleTaskExpiry time.Duration

	// RunLogLimit bounds a run's captured log (bytes; 0: the default,
	// below 0: runs keep no log), RunLogLevel is the lowest level kept,
	// and RunLogEcho, when not nil, gets every record too (the process's
	// log).
	RunLogLimit int
	RunLogLevel slog.Level
	RunLogEcho  slog.Handler

	Logger   zerolog.Logger
	Observer observe.Observer // nil: nothing observes
	Hooks    *Hooks           // nil but in tests
	// Alerts configures the alerting service (internal/alerting); its
	// Group, LiveAfter, DeadAfter and Logger are the node's. Nil: no alerts.
	Alerts *alerting.Config
	// Tx opens the transactions of InTx tasks; nil when the store has
	// none (such tasks are refused before the node is made).
	Tx repository.TxFinisher
}
