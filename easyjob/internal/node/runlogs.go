package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob/internal/runlog"
	"github.com/easyjob-go/easyjob/repository"
)

// runLogFlush is how often the logs of running jobs are stored, and how
// long a run goes before its log is (its start record is written by
// then): what `easyjob logs --follow` lags behind a job's lines. A run's
// final log is written by its finish, in the same statement.
const runLogFlush = time.Second

// runLogs is the node's service that stores the logs of jobs while they
// run. A log joins on its first line (runlog.New's first), so a job that
// logs nothing costs nothing here; it leaves when its run ends.
type runLogs struct {
	mu   sync.Mutex
	live map[*runlog.Log]time.Time // when the log joined (local)
}

// newRunLog returns the log of run (one that keeps nothing and only
// echoes when Config.RunLogLimit < 0).
func (n *Node) newRunLog(run runlog.Key) *runlog.Log {
	return runlog.New(run, n.cfg.RunLogLimit, n.cfg.RunLogLevel, n.cfg.RunLogEcho, n.joinRunLog)
}

// endRunLog returns the text of a run's log to store with its finish and
// takes the log out of the running ones.
func (n *Node) endRunLog(l *runlog.Log) string {
	if l == nil {
		return ""
	}
	n.runLogs.mu.Lock()
	delete(n.runLogs.live, l)
	n.runLogs.mu.Unlock()
	return l.End()
}

// join starts storing l while its run goes on (called with l's lock
// held: it takes only its own).
func (r *runLogs) join(l *runlog.Log) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = make(map[*runlog.Log]time.Time)
	}
	r.live[l] = time.Now()
}

// flushRunLogs is one pass of the run-log loop: the logs of runs that
// went on for runLogFlush and grew since the last pass are stored.
func (n *Node) flushRunLogs(ctx context.Context) error {
	r := &n.runLogs
	var logs []*runlog.Log
	r.mu.Lock()
	for l, joined := range r.live {
		if time.Since(joined) >= runLogFlush {
			logs = append(logs, l)
		}
	}
	r.mu.Unlock()
	var ups []repository.RunLogUpdate
	var sent []*runlog.Log
	for _, l := range logs {
		text, changed := l.Changed()
		if !changed {
			continue
		}
		sent = append(sent, l)
		k := l.Run
		ups = append(ups, repository.RunLogUpdate{
			Task: repository.TaskID(k.TaskID), Node: n.id(), ScheduledAt: k.ScheduledAt, Attempt: k.Attempt, Batch: k.Batch, Log: text,
		})
	}
	if len(ups) == 0 {
		return nil
	}
	stored, err := n.store.WriteRunLogs(ctx, ups)
	if err != nil || stored < len(ups) {
		// Some run's start is not recorded yet (or the write failed):
		// all are sent again next time; a write replaces, so the ones
		// stored are only written twice.
		for _, l := range sent {
			l.Unstored()
		}
	}
	return err
}

// ZerologHandler returns the echo of run logs for a node that logs
// through zerolog (Config.Logger): each record as an event of the
// record's level, its attributes as fields.
func ZerologHandler(l zerolog.Logger) slog.Handler { return zerologHandler{log: l} }

type zerologHandler struct {
	log   zerolog.Logger
	group string
}

func (h zerologHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= zerologLevel(l)
}

func (h zerologHandler) Handle(_ context.Context, r slog.Record) error {
	ev := h.log.WithLevel(zerologLevel(r.Level))
	r.Attrs(func(a slog.Attr) bool {
		ev = ev.Interface(h.key(a.Key), a.Value.Resolve().Any())
		return true
	})
	ev.Msg(r.Message)
	return nil
}

func (h zerologHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := h.log.With()
	for _, a := range attrs {
		c = c.Interface(h.key(a.Key), a.Value.Resolve().Any())
	}
	return zerologHandler{log: c.Logger(), group: h.group}
}

func (h zerologHandler) WithGroup(name string) slog.Handler {
	return zerologHandler{log: h.log, group: h.key(name)}
}

func (h zerologHandler) key(k string) string {
	if h.group == "" {
		return k
	}
	return h.group + "." + k
}

// zerologLevel maps a slog level to zerolog's.
func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelDebug:
		return zerolog.TraceLevel
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	default:
		return zerolog.ErrorLevel
	}
}
