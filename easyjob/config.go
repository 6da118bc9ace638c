package easyjob

import (
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/uptrace/bun"

	"github.com/easyjob-go/easyjob/easyjob/alert"
	"github.com/easyjob-go/easyjob/easyjob/internal/alerting"
	"github.com/easyjob-go/easyjob/easyjob/internal/node"
	"github.com/easyjob-go/easyjob/easyjob/observe"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// Config configures one node. The zero value is valid: it runs on a
// private in-memory store with the defaults below.
type Config struct {
	// Where the schedule lives, first non-empty wins: Store, BunDB, DB, DSN.
	// None of them: a private in-memory store (one process only).
	Store repository.Store
	BunDB *bun.DB
	DB    *sql.DB
	DSN   string
	// Pooler says what sits between the nodes and PostgreSQL: "" (a
	// direct connection or a session pooler) or "transaction" (PgBouncer
	// in pool_mode=transaction, or a proxy like it): statements are then
	// not prepared and the nodes poll instead of listening. The DSN
	// parameter easyjob_pooler=transaction says the same. Left unset, a
	// transaction pooler is found out at the first fire's finish.
	Pooler string
	// SkipMigrate leaves the schema to you. By default Run applies the
	// embedded migrations at start (Postgres; under an advisory lock).
	SkipMigrate bool
	// FailFast makes Run return the error of a start the database did not
	// answer (down, not yet up, unreachable). By default Run retries with
	// backoff (up to 30 s apart) until the database answers or its context
	// is done, so a service does not die with its database; Health reports
	// StateStarting with the reason meanwhile.
	FailFast bool

	// Group scopes tasks and nodes so several services can share a
	// database. Default "default".
	Group string
	// NodeName is shown in status output. Default host:pid.
	NodeName string
	// Strategy names the claim strategy: default, id_hash, least_count,
	// weight, or a name registered with strategy.Register. Default "default".
	Strategy string
	// Weight is this node's share under the weight strategy. Default 1.
	Weight int

	HeartbeatInterval time.Duration // default 1s
	// LiveAfter: a node is live while its last heartbeat is this recent.
	// Default 2 heartbeats.
	LiveAfter time.Duration
	// DeadAfter: a node silent this long is dead and its tasks are
	// recovered. Default 3 heartbeats; must exceed LiveAfter.
	DeadAfter       time.Duration
	RecoverInterval time.Duration // default 1s
	PollInterval    time.Duration // default 1s
	// FetchWindow: the loader claims tasks due within this window and fires
	// them from the local delay queue. Default 5s.
	FetchWindow time.Duration
	// StealAfter: a due task left unclaimed this long may be claimed by any
	// live node whatever the strategy says. Default 2 poll intervals.
	StealAfter time.Duration
	// Workers bounds concurrently running jobs. Default 10.
	Workers int
	// MaxClaims bounds claims held (queued or running). Default 1000 ×
	// Workers: a claim costs a few hundred bytes, and a node with more due
	// fires than workers gives the ones it cannot start back to peers
	// (StartDeadline).
	MaxClaims int
	// StartDeadline: a claimed fire that found no free worker for this long
	// is released so a peer can run it. Default 1s.
	StartDeadline time.Duration
	// ShutdownGrace: how long Run waits for running jobs after ctx is done
	// before cancelling them. Default 30s.
	ShutdownGrace time.Duration
	// NodeExpiry: node rows dead this long are deleted. Default 1h.
	NodeExpiry time.Duration
	// CallTimeout bounds every database call (the connection included):
	// a path to the database that goes silent (a NAT or conntrack flush,
	// a moved virtual IP: packets vanish, sockets stay open) costs a call
	// this long, the driver discards the connection, and the node retries
	// on a fresh one. Heartbeats and live-node reads are bounded by
	// DeadAfter when that is shorter; bulk statements (registration,
	// history pruning, recovery, removal) by BulkCallFactor × CallTimeout.
	// Default 5s.
	CallTimeout time.Duration

	// Logger receives structured logs (zerolog, the runtime's own logger).
	// Slog instead sends them to a log/slog logger (levels mapped, fields
	// kept as attributes; see logging.go). Set one of the two, not both
	// (ErrInvalidConfig). Neither: warnings and errors go to stderr.
	Logger *zerolog.Logger
	Slog   *slog.Logger

	// RunLogLimit bounds the log kept with each run: the lines its job
	// writes through Logger(ctx), stored with the run's history row and
	// pruned with it (easyjob logs, the dashboard's run page). Lines past
	// the limit are counted in a last line, not kept. Default 64 KiB;
	// below 0 keeps none. Every line also goes to the process's log
	// (Logger or Slog) when that logs its level.
	RunLogLimit int
	// RunLogLevel is the lowest level of the lines kept. Default
	// slog.LevelInfo.
	RunLogLevel slog.Level

	// Alerts are alert rules in code (easyjob/alert): a task's failures,
	// late or missed fires, dead-man silence, a node's death, a task no
	// live node registers. Rules added at runtime (easyjob alerts add,
	// the dashboard) are read from the database too. Each alert is
	// delivered once for the whole group, by the node that recorded it
	// first, and resolved once when its condition clears.
	Alerts []alert.Rule
	// AlertNotifiers deliver the alerts of rules without notifiers of
	// their own (alert.Func for a Go callback, *alert.Webhook), and of
	// runtime rules without a webhook. None: such alerts are recorded
	// (easyjob alerts history) and not sent.
	AlertNotifiers []alert.Notifier
	// AlertInterval is how often each node reads the group's alert rules
	// and open alerts (every 5 intervals while there are no rules), and
	// the lowest live node checks node deaths (dead-man and handler
	// rules, which read every task of the group: every 5 intervals).
	// Default 1s.
	AlertInterval time.Duration

	// Observer receives the runtime's events for metrics and traces
	// (easyjob/metrics/prom, easyjob/metrics/otel; Observers combines
	// several). Default: none.
	Observer observe.Observer

	// HistoryMaxAge: finished runs older than this are deleted (once a
	// minute, by one node of the group), and so are resolved alerts
	// whose notifications were delivered. Default 0: kept forever.
	HistoryMaxAge time.Duration
	// HistoryMaxRows: only the newest this many runs of each task are kept.
	// Default 0: no bound.
	HistoryMaxRows int
	// StaleTaskExpiry: a task that no live node of the group registers
	// (stale: removed from the code, or its service renamed) is removed
	// after it has been stale this long, its history kept (see
	// Client.Remove). Checked once a minute by one node of the group.
	// Default 0: stale tasks are kept until an operator removes them.
	StaleTaskExpiry time.Duration

	hooks      *node.Hooks // nil but in this package's tests
	slogBridge bool        // Logger was made from Slog by withDefaults
}

// runtime is the node's configuration: c after withDefaults.
func (c Config) runtime() node.Config {
	return node.Config{
		Group: c.Group, NodeName: c.NodeName, Strategy: c.Strategy, Weight: c.Weight,
		HeartbeatInterval: c.HeartbeatInterval, LiveAfter: c.LiveAfter, DeadAfter: c.DeadAfter,
		RecoverInterval: c.RecoverInterval, PollInterval: c.PollInterval,
		FetchWindow: c.FetchWindow, StealAfter: c.StealAfter,
		Workers: c.Workers, MaxClaims: c.MaxClaims,
		StartDeadline: c.StartDeadline, ShutdownGrace: c.ShutdownGrace, NodeExpiry: c.NodeExpiry,
		HistoryMaxAge: c.HistoryMaxAge, HistoryMaxRows: c.HistoryMaxRows, StaleTaskExpiry: c.StaleTaskExpiry,
		Logger: *c.Logger, Observer: c.Observer, Hooks: c.hooks,
		RunLogLimit: c.RunLogLimit, RunLogLevel: c.RunLogLevel, RunLogEcho: c.runLogEcho(),
		Alerts: c.alerting(),
	}
}

// alerting is the alerting of the node: the rules in code with their
// defaults (validate refused the invalid ones).
func (c Config) alerting() *alerting.Config {
	rules := make([]alert.Rule, 0, len(c.Alerts))
	for _, r := range c.Alerts {
		if r, err := r.Normalize(); err == nil {
			rules = append(rules, r)
		}
	}
	return &alerting.Config{Rules: rules, Notifiers: c.AlertNotifiers, Interval: c.AlertInterval, Retention: c.HistoryMaxAge}
}

// runLogEcho is where the lines of run logs go besides their runs: the
// process's log, with the group's name.
func (c Config) runLogEcho() slog.Handler {
	if c.Slog != nil {
		return c.Slog.Handler().WithAttrs([]slog.Attr{slog.String("group", c.Group)})
	}
	return node.ZerologHandler(c.Logger.With().Str("group", c.Group).Logger())
}

func (c Config) withDefaults() Config {
	if c.Group == "" {
		c.Group = "default"
	}
	if c.NodeName == "" {
		host, _ := os.Hostname()
		c.NodeName = host + ":" + strconv.Itoa(os.Getpid())
	}
	if c.Strategy == "" {
		c.Strategy = "default"
	}
	if c.Weight == 0 {
		c.Weight = 1
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = time.Second
	}
	if c.LiveAfter == 0 {
		c.LiveAfter = 2 * c.HeartbeatInterval
	}
	if c.DeadAfter == 0 {
		c.DeadAfter = 3 * c.HeartbeatInterval
	}
	if c.RecoverInterval == 0 {
		c.RecoverInterval = time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
	if c.FetchWindow == 0 {
		c.FetchWindow = 5 * time.Second
	}
	if c.StealAfter == 0 {
		c.StealAfter = 2 * c.PollInterval
	}
	if c.Workers == 0 {
		c.Workers = 10
	}
	if c.MaxClaims == 0 {
		c.MaxClaims = 1000 * c.Workers
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 5 * time.Second
	}
	if c.StartDeadline == 0 {
		c.StartDeadline = time.Second
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 30 * time.Second
	}
	if c.NodeExpiry == 0 {
		c.NodeExpiry = time.Hour
	}
	if c.AlertInterval == 0 {
		c.AlertInterval = time.Second
	}
	if c.Logger == nil {
		c.Logger, c.slogBridge = defaultLogger(c.Slog), c.Slog != nil
	}
	return c
}

func (c Config) validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("%w: %s must be positive (got %v)", ErrInvalidConfig, field, v)
	}
	if c.Slog != nil && !c.slogBridge {
		return fmt.Errorf("%w: set Logger (zerolog) or Slog (log/slog), not both", ErrInvalidConfig)
	}
	if _, err := postgres.ParsePooler(c.Pooler); err != nil {
		return fmt.Errorf("%w: Pooler %q: want \"transaction\" or empty", ErrInvalidConfig, c.Pooler)
	}
	switch {
	case c.Weight < 1:
		return bad("Weight", c.Weight)
	case c.HeartbeatInterval <= 0:
		return bad("HeartbeatInterval", c.HeartbeatInterval)
	case c.LiveAfter <= 0:
		return bad("LiveAfter", c.LiveAfter)
	case c.RecoverInterval <= 0:
		return bad("RecoverInterval", c.RecoverInterval)
	case c.PollInterval <= 0:
		return bad("PollInterval", c.PollInterval)
	case c.FetchWindow <= 0:
		return bad("FetchWindow", c.FetchWindow)
	case c.StealAfter <= 0:
		return bad("StealAfter", c.StealAfter)
	case c.Workers <= 0:
		return bad("Workers", c.Workers)
	case c.MaxClaims <= 0:
		return bad("MaxClaims", c.MaxClaims)
	case c.CallTimeout <= 0:
		return bad("CallTimeout", c.CallTimeout)
	case c.StartDeadline <= 0:
		return bad("StartDeadline", c.StartDeadline)
	case c.ShutdownGrace <= 0:
		return bad("ShutdownGrace", c.ShutdownGrace)
	}
	if strings.TrimSpace(c.Group) != c.Group {
		return fmt.Errorf("%w: Group %q: blank or surrounded by spaces", ErrInvalidConfig, c.Group)
	}
	if c.StaleTaskExpiry < 0 {
		return fmt.Errorf("%w: StaleTaskExpiry must not be negative (got %v)", ErrInvalidConfig, c.StaleTaskExpiry)
	}
	if c.HistoryMaxAge < 0 || c.HistoryMaxRows < 0 {
		return fmt.Errorf("%w: HistoryMaxAge (%v) and HistoryMaxRows (%d) must not be negative", ErrInvalidConfig, c.HistoryMaxAge, c.HistoryMaxRows)
	}
	if err := validateAlerts(c.Alerts); err != nil {
		return err
	}
	if c.AlertInterval < 0 {
		return bad("AlertInterval", c.AlertInterval)
	}
	if c.DeadAfter <= c.LiveAfter {
		return fmt.Errorf("%w: DeadAfter (%v) must exceed LiveAfter (%v)", ErrInvalidConfig, c.DeadAfter, c.LiveAfter)
	}
	if c.LiveAfter < c.HeartbeatInterval {
		return fmt.Errorf("%w: LiveAfter (%v) must be at least HeartbeatInterval (%v)", ErrInvalidConfig, c.LiveAfter, c.HeartbeatInterval)
	}
	return nil
}

// validateAlerts refuses invalid rules, and two rules of one name.
func validateAlerts(rules []alert.Rule) error {
	seen := make(map[string]bool, len(rules))
	for _, r := range rules {
		n, err := r.Normalize()
		if err != nil {
			return fmt.Errorf("%w: Alerts: %w", ErrInvalidConfig, err)
		}
		if seen[n.Name] {
			return fmt.Errorf("%w: Alerts: two rules named %q (give them a Name each)", ErrInvalidConfig, n.Name)
		}
		seen[n.Name] = true
	}
	return nil
}
