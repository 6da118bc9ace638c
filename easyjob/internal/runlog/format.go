package runlog

import (
	"encoding"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// The line of a record, byte for byte what slog.TextHandler (no
// ReplaceAttr, no AddSource) writes, appended to a buffer without one of
// its own: `time=… level=… msg=… key=value…` and a newline. Written here
// rather than through a TextHandler because a job writes its lines while
// it holds its worker (TestFormatIsTextHandlers compares the two).

// appendRecord appends r's line: its time (UTC, in milliseconds), level
// and message, then pre (the handler's attributes, formatted) and r's
// attributes, their keys after prefix.
func appendRecord(b []byte, r slog.Record, pre []byte, prefix string) []byte {
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, r.Time.Round(0))
	b = append(b, " level="...)
	b = appendString(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendString(b, r.Message)
	b = append(b, pre...)
	if r.NumAttrs() > 0 {
		r.Attrs(func(a slog.Attr) bool {
			b, _ = appendAttr(b, a, prefix)
			return true
		})
	}
	return append(b, '\n')
}

// appendAttrs appends as, each after a space; it reports whether any
// was.
func appendAttrs(b []byte, as []slog.Attr, prefix string) []byte {
	for _, a := range as {
		b, _ = appendAttr(b, a, prefix)
	}
	return b
}

// appendAttr appends a space and a as key=value, a group as its
// attributes (their keys qualified by its own), nothing for an empty
// attribute or group; it reports whether it appended anything.
func appendAttr(b []byte, a slog.Attr, prefix string) ([]byte, bool) {
	v := a.Value.Resolve()
	if a.Key == "" && v.Kind() == slog.KindAny && v.Any() == nil {
		return b, false
	}
	if v.Kind() == slog.KindAny {
		if src, ok := v.Any().(*slog.Source); ok {
			if src == nil || *src == (slog.Source{}) {
				return b, false
			}
			v = slog.StringValue(fmt.Sprintf("%s:%d", src.File, src.Line))
		}
	}
	if v.Kind() == slog.KindGroup {
		attrs := v.Group()
		if len(attrs) == 0 {
			return b, true
		}
		pos := len(b)
		if a.Key != "" {
			prefix += a.Key + "."
		}
		wrote := false
		for _, ga := range attrs {
			var ok bool
			if b, ok = appendAttr(b, ga, prefix); ok {
				wrote = true
			}
		}
		if !wrote {
			return b[:pos], false
		}
		return b, true
	}
	b = append(b, ' ')
	switch {
	case prefix == "":
		b = appendString(b, a.Key)
	case !needsQuoting(prefix) && !needsQuoting(a.Key):
		b = append(append(b, prefix...), a.Key...)
	default:
		b = strconv.AppendQuote(b, prefix+a.Key)
	}
	b = append(b, '=')
	return appendValue(b, v), true
}

// appendValue appends v as the text handler does; a value whose method
// panics reads <nil> (a nil pointer) or the panic.
func appendValue(b []byte, v slog.Value) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			if rv := reflect.ValueOf(v.Any()); rv.Kind() == reflect.Pointer && rv.IsNil() {
				out = appendString(b, "<nil>")
				return
			}
			out = appendString(b, fmt.Sprintf("!PANIC: %v", r))
		}
	}()
	switch v.Kind() {
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return append(b, v.Duration().String()...)
	case slog.KindTime:
		return appendRFC3339Millis(b, v.Time())
	}
	x := v.Any()
	if tm, ok := x.(encoding.TextMarshaler); ok {
		data, err := tm.MarshalText()
		if err != nil {
			return appendString(b, fmt.Sprintf("!ERROR:%v", err))
		}
		return appendString(b, string(data))
	}
	if bs, ok := byteSlice(x); ok {
		return append(b, strconv.Quote(string(bs))...)
	}
	return appendString(b, fmt.Sprintf("%+v", x))
}

// byteSlice returns x as a []byte when its underlying type is one.
func byteSlice(x any) ([]byte, bool) {
	if bs, ok := x.([]byte); ok {
		return bs, true
	}
	t := reflect.TypeOf(x)
	if t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return reflect.ValueOf(x).Bytes(), true
	}
	return nil, false
}

// appendString appends s, quoted when it must be.
func appendString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// needsQuoting reports whether s must be quoted: empty, or with a space,
// '=', '"', a control character or an unprintable or invalid rune.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendRFC3339Millis appends t as RFC 3339 with milliseconds
// (2006-01-02T15:04:05.000Z07:00), its digits written here for a UTC
// time of years 1 to 9999 (every run's line), by time's formatting else.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if t.Location() != time.UTC || year < 1 || year > 9999 {
		// As slog does: RFC3339Nano, the 4th digit of 1/10 ms added
		// kept from its trimming, then dropped.
		const prefixLen = len("2006-01-02T15:04:05.000")
		n := len(b)
		t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, ms, 3)
	return append(b, 'Z')
}

// appendDigits appends v (0 ≤ v < 10^n) as n decimal digits.
func appendDigits(b []byte, v, n int) []byte {
	var d [4]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:n]...)
}

// countEmptyGroups counts the attributes of as that are empty groups.
func countEmptyGroups(as []slog.Attr) int {
	n := 0
	for _, a := range as {
		if a.Value.Kind() == slog.KindGroup && len(a.Value.Group()) == 0 {
			n++
		}
	}
	return n
}
