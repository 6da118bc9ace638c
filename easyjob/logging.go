package easyjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"
)

// defaultLogger is the runtime's logger when Config.Logger is not set:
// a bridge to Config.Slog when that is set, else warnings and errors on
// stderr, so a job failure or a lost database is never silent.
func defaultLogger(sl *slog.Logger) *zerolog.Logger {
	var l zerolog.Logger
	if sl != nil {
		l = slogBridge(sl.Handler())
	} else {
		l = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true, TimeFormat: time.RFC3339}).
			Level(zerolog.WarnLevel).With().Timestamp().Logger()
	}
	return &l
}

// slogBridge returns a zerolog logger whose events go to h as slog
// records: levels mapped (trace → Debug-4, fatal and panic → Error+4),
// the message as the record's message, every other field as an attribute
// in order (numbers as int64 or float64, objects and arrays as values of
// their JSON decoding). Events below the lowest level h enables when the
// bridge is made are not even built.
func slogBridge(h slog.Handler) zerolog.Logger {
	lowest := zerolog.Disabled
	for l := zerolog.TraceLevel; l <= zerolog.PanicLevel; l++ {
		if h.Enabled(context.Background(), slogLevel(l)) {
			lowest = l
			break
		}
	}
	return zerolog.New(slogWriter{h: h}).Level(lowest)
}

// slogLevel maps a zerolog level to slog's.
func slogLevel(l zerolog.Level) slog.Level {
	switch l {
	case zerolog.TraceLevel:
		return slog.LevelDebug - 4
	case zerolog.DebugLevel:
		return slog.LevelDebug
	case zerolog.WarnLevel:
		return slog.LevelWarn
	case zerolog.ErrorLevel:
		return slog.LevelError
	case zerolog.FatalLevel, zerolog.PanicLevel:
		return slog.LevelError + 4
	default:
		return slog.LevelInfo
	}
}

// slogWriter is a zerolog.LevelWriter that re-emits each event, a JSON
// object, as a slog record.
type slogWriter struct{ h slog.Handler }

// Write implements io.Writer for events without a level writer's help:
// the level is read from the event.
func (w slogWriter) Write(p []byte) (int, error) { return w.WriteLevel(zerolog.NoLevel, p) }

// WriteLevel implements zerolog.LevelWriter.
func (w slogWriter) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	ctx := context.Background()
	if l != zerolog.NoLevel && !w.h.Enabled(ctx, slogLevel(l)) {
		return len(p), nil
	}
	rec, err := slogRecord(l, p)
	if err != nil {
		// Not JSON (never from zerolog's encoder): keep the text.
		rec = slog.NewRecord(time.Now(), slogLevel(l), string(bytes.TrimSpace(p)), 0)
	}
	if l == zerolog.NoLevel && !w.h.Enabled(ctx, rec.Level) {
		return len(p), nil
	}
	return len(p), w.h.Handle(ctx, rec)
}

// slogRecord decodes one zerolog event into a record, keeping the order
// of its fields.
func slogRecord(l zerolog.Level, p []byte) (slog.Record, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return slog.Record{}, errNotObject
	}
	var msg string
	var attrs []slog.Attr
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return slog.Record{}, err
		}
		key, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return slog.Record{}, err
		}
		switch key {
		case zerolog.MessageFieldName:
			msg, _ = v.(string)
		case zerolog.LevelFieldName:
			if l == zerolog.NoLevel {
				if s, ok := v.(string); ok {
					if parsed, err := zerolog.ParseLevel(s); err == nil {
						l = parsed
					}
				}
			}
		case zerolog.TimestampFieldName:
			// The handler stamps the record itself.
		default:
			attrs = append(attrs, slogAttr(key, v))
		}
	}
	rec := slog.NewRecord(time.Now(), slogLevel(l), msg, 0)
	rec.AddAttrs(attrs...)
	return rec, nil
}

// slogAttr converts one decoded JSON value.
func slogAttr(key string, v any) slog.Attr {
	switch v := v.(type) {
	case string:
		return slog.String(key, v)
	case bool:
		return slog.Bool(key, v)
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return slog.Int64(key, i)
		}
		f, _ := v.Float64()
		return slog.Float64(key, f)
	default:
		return slog.Any(key, v)
	}
}

var errNotObject = errors.New("easyjob: log event is not a JSON object")
