package argschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type base struct {
	Tenant string `json:"tenant"`
}

type reportArgs struct {
	base
	N       int               `json:"n"`
	Ratio   float64           `json:"ratio,omitempty"`
	Count   uint              `json:"count"`
	Emails  []string          `json:"emails"`
	Labels  map[string]int    `json:"labels"`
	At      time.Time         `json:"at"`
	Limit   *int              `json:"limit"`
	Raw     json.RawMessage   `json:"raw"`
	Any     any               `json:"any"`
	Skip    string            `json:"-"`
	Plain   bool              // no tag: the field name, case folded
	Nested  struct{ X int }   `json:"nested"`
	private int               //nolint:unused // not decoded
	Opts    map[string]string `json:"opts"`
}

func TestCheck(t *testing.T) {
	s := For[reportArgs]()
	for _, ok := range []string{
		`{}`, `null`, `{"n": 1}`, `{"n": -3, "ratio": 0.5, "count": 2}`, `{"tenant": "acme"}`,
		`{"emails": ["a@b", "c@d"], "labels": {"x": 1}}`, `{"at": "2026-11-26T10:00:00Z"}`,
		`{"limit": null}`, `{"limit": 5}`, `{"raw": {"any": [1, "x"]}}`, `{"any": [true]}`,
		`{"plain": true}`, `{"PLAIN": false}`, `{"nested": {"X": 1}}`,
	} {
		if err := s.Check([]byte(ok)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", ok, err)
		}
	}
	for args, want := range map[string]string{
		`{"n": "x"}`:                  `args.n: want integer (int), got string "x"`,
		`{"n": 1.5}`:                  `args.n: want integer`,
		`{"count": -1}`:               `args.count: want integer (uint), got -1 (below 0)`,
		`{"emails": ["a", 2]}`:        `args.emails[1]: want string`,
		`{"labels": {"x": "y"}}`:      `args.labels.x: want integer`,
		`{"nested": {"X": true}}`:     `args.nested.X: want integer`,
		`{"typo": 1}`:                 `args: unknown field "typo"`,
		`{"skip": "x"}`:               `unknown field "skip"`,
		`{"private": 1}`:              `unknown field "private"`,
		`[1]`:                         `args: want object`,
		`{"n": 1} {"n": 2}`:           `more than one JSON value`,
		`{"n": `:                      `not JSON`,
		`{"at": 5}`:                   `args.at: want string (time.Time)`,
		`{"opts": {"a": {"b": "c"}}}`: `args.opts.a: want string`,
		`{"plain": "yes"}`:            `args.plain: want boolean`,
		`{"tenant": ["acme"]}`:        `args.tenant: want string, got array`,
	} {
		err := s.Check([]byte(args))
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want an ErrMismatch containing %q", args, err, want)
		}
	}
}

func TestSchemaRoundTripsAsJSON(t *testing.T) {
	b, err := json.Marshal(For[reportArgs]())
	if err != nil {
		t.Fatal(err)
	}
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Check([]byte(`{"n": "x"}`)); err == nil {
		t.Fatalf("the published schema (%s) accepts a string for an int", b)
	}
	if err := s.Check([]byte(`{"n": 7, "emails": []}`)); err != nil {
		t.Fatalf("the published schema refuses valid arguments: %v", err)
	}
}

func TestScalarsAndAnything(t *testing.T) {
	if err := For[int]().Check([]byte(`"x"`)); err == nil {
		t.Error("an int handler accepts a string")
	}
	if err := For[any]().Check([]byte(`{"whatever": [1]}`)); err != nil {
		t.Errorf("an any handler refuses arguments: %v", err)
	}
	if err := For[struct{}]().Check([]byte(`{"x": 1}`)); err == nil {
		t.Error("an empty struct accepts a field")
	}
}
