package easyjob

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

// Run retries its start with this backoff while the database does not
// answer (Config.FailFast returns the error instead).
const (
	startRetryBase = 250 * time.Millisecond
	startRetryMax  = 30 * time.Second
)

// retryStart reports whether a failed start is worth another attempt:
// not when it cannot get better by waiting (a schema newer than this
// binary, a configuration or strategy the node refuses, credentials the
// server refuses).
func retryStart(err error) bool {
	var pg *pgconn.PgError
	switch {
	case errors.Is(err, repository.ErrSchemaTooNew), errors.Is(err, ErrInvalidConfig), errors.Is(err, strategy.ErrUnknownStrategy):
		return false
	case errors.As(err, &pg) && len(pg.Code) == 5 && pg.Code[:2] == "28": // invalid authorization
		return false
	}
	return true
}

// startOutage keeps a database that does not answer at start to a few
// log lines: one at the first failure, one a minute after that, and one
// when it answers, with how long it took.
type startOutage struct {
	since, noted time.Time
	attempts     int
}

func (o *startOutage) failed(log *zerolog.Logger, err error, retry time.Duration) {
	now := time.Now()
	o.attempts++
	switch {
	case o.since.IsZero():
		o.since, o.noted = now, now
		log.Error().Err(err).Str("retry_in", retry.Round(time.Millisecond).String()).
			Msg("easyjob: database not answering at start; retrying until it does (Config.FailFast returns the error instead)")
	case now.Sub(o.noted) >= time.Minute:
		o.noted = now
		log.Warn().Err(err).Str("away", now.Sub(o.since).Round(time.Second).String()).Int("attempts", o.attempts).
			Msg("easyjob: database still not answering at start")
	}
}

func (o *startOutage) answered(log *zerolog.Logger) {
	if o.since.IsZero() {
		return
	}
	log.Warn().Str("waited", time.Since(o.since).Round(time.Millisecond).String()).Int("attempts", o.attempts+1).
		Msg("easyjob: database answering; starting")
	*o = startOutage{}
}
