package runlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

// textMarshaler, failingMarshaler, panicker, valuer and nilStringer are
// values whose text the text handler takes from their methods.
type textMarshaler struct{ s string }

func (t textMarshaler) MarshalText() ([]byte, error) { return []byte("tm:" + t.s), nil }

type failingMarshaler struct{}

func (failingMarshaler) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

type panicker struct{}

func (panicker) MarshalText() ([]byte, error) { panic("boom") }

type ptrMarshaler struct{ s string }

func (p *ptrMarshaler) MarshalText() ([]byte, error) { return []byte(p.s), nil }

type valuer struct{ v slog.Value }

func (v valuer) LogValue() slog.Value { return v.v }

type named []byte

// formatCases are the attributes the format is checked on: every kind,
// quoting, groups (empty, inlined, nested), LogValuers, methods that fail.
func formatCases() [][]slog.Attr {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 4_567_891, time.UTC)
	var nilErr *net.OpError
	return [][]slog.Attr{
		nil,
		{slog.Int("i", 1), slog.Int("of", 5)},
		{slog.String("s", ""), slog.String("sp", "a b"), slog.String("eq", "a=b"), slog.String("q", `a"b`), slog.String("bs", `a\b`)},
		{slog.String("ctl", "a\tb\nc\x00"), slog.String("del", "a\x7fb"), slog.String("uni", "héllo wörld"), slog.String("nbsp", "a\u00a0b"), slog.String("bad", "a\xffb"), slog.String("zw", "a\u200bb")},
		{slog.String("key with space", "v"), slog.String("k=", "v"), slog.String("", "empty key"), slog.Int("", 0)},
		{slog.Int64("neg", -42), slog.Uint64("u", math.MaxUint64), slog.Float64("f", 3.25), slog.Float64("big", 1e21), slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1))},
		{slog.Bool("t", true), slog.Bool("f", false), slog.Duration("d", 1500*time.Millisecond), slog.Duration("z", 0)},
		{slog.Time("utc", t0), slog.Time("zone", t0.In(time.FixedZone("X", -7*3600-30*60))), slog.Time("old", time.Date(-5, 1, 2, 3, 4, 5, 999_999_999, time.UTC)), slog.Time("zero", time.Time{}), slog.Time("far", time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC))},
		{slog.Any("err", errors.New("disk full: /var")), slog.Any("nilerr", nil), slog.Any("nilptr", nilErr), slog.Any("tm", textMarshaler{"x y"}), slog.Any("tmfail", failingMarshaler{}), slog.Any("panics", panicker{}), slog.Any("nilpm", (*ptrMarshaler)(nil))},
		{slog.Any("bytes", []byte("a\"b")), slog.Any("named", named("xyz")), slog.Any("slice", []int{1, 2}), slog.Any("map", map[string]int{"a": 1}), slog.Any("struct", struct{ A, B int }{1, 2}), slog.Any("ip", net.IPv4(10, 0, 0, 1))},
		{slog.Group("g", slog.Int("a", 1), slog.Group("h", slog.String("b", "x y"))), slog.Group("empty"), slog.Group("", slog.Int("inl", 2)), slog.Group("allempty", slog.Group("e"))},
		{slog.Any("lv", valuer{slog.IntValue(7)}), slog.Any("lvg", valuer{slog.GroupValue(slog.Int("x", 1))}), slog.Any("lvnil", valuer{slog.AnyValue(nil)})},
		{slog.Any("src", &slog.Source{File: "a.go", Line: 3}), slog.Any("nosrc", &slog.Source{}), slog.Any("nilsrc", (*slog.Source)(nil))},
		{slog.Any("", nil), slog.Int("after", 1)},
	}
}

// logOps are ways a job's logger is derived: none, With, WithGroup, and
// both in turn, including a group with nothing after it.
var logOps = []func(*slog.Logger) *slog.Logger{
	func(l *slog.Logger) *slog.Logger { return l },
	func(l *slog.Logger) *slog.Logger { return l.With("run", 42, "who", "a b") },
	func(l *slog.Logger) *slog.Logger { return l.WithGroup("g") },
	func(l *slog.Logger) *slog.Logger {
		return l.With("k", 1).WithGroup("g x").With("m", "n").WithGroup("h")
	},
	func(l *slog.Logger) *slog.Logger {
		return l.WithGroup("g").With(slog.Group("e"), slog.Group("f", slog.Int("a", 1)))
	},
	func(l *slog.Logger) *slog.Logger { return l.With(slog.Group("e")).WithGroup("only") },
	func(l *slog.Logger) *slog.Logger {
		return slog.New(l.Handler().WithGroup("")).With("k", slog.Any("err", errors.New("x")))
	},
}

// TestFormatIsTextHandlers writes the same records through a run's logger
// and through slog's TextHandler: the lines are the same, byte for byte.
func TestFormatIsTextHandlers(t *testing.T) {
	msgs := []string{"loaded", "", "two words", "k=v", "quote\"d", "tab\there", "ünï", "line\nbreak"}
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError + 4, slog.LevelDebug + 2}
	times := []time.Time{
		time.Date(2026, 11, 27, 6, 0, 0, 4_000_000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 11, 27, 6, 0, 0, 4_000_000, time.FixedZone("X", 3600)),
		time.Unix(0, rand.Int64N(1<<62)),
	}
	n := 0
	for oi, op := range logOps {
		for ci, attrs := range formatCases() {
			for mi, msg := range msgs {
				level := levels[(ci+mi)%len(levels)]
				tm := times[(oi+ci+mi)%len(times)]
				l := New(Key{Task: "t"}, 1<<20, slog.LevelDebug-8, nil, nil)
				var want bytes.Buffer
				text := slog.New(slog.NewTextHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug - 8}))
				for _, lg := range []*slog.Logger{op(Logger(l)), op(text)} {
					r := slog.NewRecord(tm, level, msg, 0)
					r.AddAttrs(attrs...)
					if h := lg.Handler(); h.Enabled(context.Background(), level) {
						if _, ok := h.(*slog.TextHandler); ok {
							r.Time = r.Time.UTC() // as a run's handler writes it
						}
						if err := h.Handle(context.Background(), r); err != nil {
							t.Fatal(err)
						}
					}
				}
				if got := l.Text(); got != want.String() {
					t.Errorf("op %d, case %d, msg %q:\n got %q\nwant %q", oi, ci, msg, got, want.String())
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("nothing compared")
	}
}

// TestFormatRandomStrings compares the quoting of random strings, keys
// and group names.
func TestFormatRandomStrings(t *testing.T) {
	alphabet := []rune("ab =\"\\\t\n\x00\x7fé\u00a0\u2028\U0001F600\ufffd.")
	str := func() string {
		var sb strings.Builder
		for range rand.IntN(6) {
			sb.WriteRune(alphabet[rand.IntN(len(alphabet))])
		}
		if rand.IntN(8) == 0 {
			sb.WriteString("\xff")
		}
		return sb.String()
	}
	for i := range 5000 {
		l := New(Key{}, 1<<20, slog.LevelInfo, nil, nil)
		var want bytes.Buffer
		var h1, h2 slog.Handler = NewHandler(l), slog.NewTextHandler(&want, nil)
		if i%3 == 0 {
			g := str()
			h1, h2 = h1.WithGroup(g), h2.WithGroup(g)
		}
		if i%5 == 0 {
			a := []slog.Attr{slog.String(str(), str())}
			h1, h2 = h1.WithAttrs(a), h2.WithAttrs(a)
		}
		tm := time.Unix(rand.Int64N(1<<40), rand.Int64N(1e9)).UTC()
		r := slog.NewRecord(tm, slog.LevelInfo, str(), 0)
		r.AddAttrs(slog.String(str(), str()), slog.Group(str(), slog.String(str(), str())))
		for _, h := range []slog.Handler{h1, h2} {
			_ = h.Handle(context.Background(), r.Clone())
		}
		if got := l.Text(); got != want.String() {
			t.Fatalf("got  %q\nwant %q", got, want.String())
		}
	}
}
