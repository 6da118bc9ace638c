package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// ErrMismatch is wrapped by Check's errors: the arguments do not fit.
var ErrMismatch = errors.New("arguments do not match the handler's type")

// Check reports whether args (JSON) decode into the type s describes,
// naming the first member that does not: `args.n: want integer (int),
// got string "x"`.
func (s *Schema) Check(args []byte) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("%w: not JSON: %w", ErrMismatch, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: more than one JSON value", ErrMismatch)
	}
	return s.check("args", v)
}

func (s *Schema) check(path string, v any) error {
	if s == nil || s.Type == "" {
		return nil
	}
	if v == nil {
		// encoding/json leaves the zero value for null, whatever the type.
		return nil
	}
	switch s.Type {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return s.mismatch(path, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return s.mismatch(path, v)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return s.mismatch(path, v)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return s.mismatch(path, v)
		}
		f, err := n.Float64()
		if err != nil || f != math.Trunc(f) || strings.ContainsAny(n.String(), ".eE") {
			return s.mismatch(path, v)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%w: %s: want %s, got %s (below %v)", ErrMismatch, path, s.want(), n, *s.Minimum)
		}
	case "array":
		xs, ok := v.([]any)
		if !ok {
			return s.mismatch(path, v)
		}
		for i, x := range xs {
			if err := s.Items.check(fmt.Sprintf("%s[%d]", path, i), x); err != nil {
				return err
			}
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return s.mismatch(path, v)
		}
		return s.checkMembers(path, m)
	}
	return nil
}

// checkMembers checks an object's members: a struct's by name (case
// folded, as encoding/json matches them; others refused), a map's
// against its value schema.
func (s *Schema) checkMembers(path string, m map[string]any) error {
	for _, k := range sortedKeys(m) {
		sub := s.member(k)
		if sub == nil {
			return fmt.Errorf("%w: %s: unknown field %q (%s has %s)", ErrMismatch, path, k, s.GoType, s.fieldList())
		}
		if err := sub.check(path+"."+k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// member is the schema of member k, nil when the object refuses it.
func (s *Schema) member(k string) *Schema {
	if s.Properties == nil {
		if s.Additional != nil {
			return s.Additional
		}
		return &Schema{} // a recursive struct: the node's decoder judges
	}
	if p, ok := s.Properties[k]; ok {
		return p
	}
	for name, p := range s.Properties {
		if strings.EqualFold(name, k) {
			return p
		}
	}
	return s.Additional
}

func (s *Schema) mismatch(path string, v any) error {
	return fmt.Errorf("%w: %s: want %s, got %s", ErrMismatch, path, s.want(), describe(v))
}

func (s *Schema) want() string {
	if s.GoType != "" && s.GoType != s.Type {
		return fmt.Sprintf("%s (%s)", s.Type, s.GoType)
	}
	return s.Type
}

func (s *Schema) fieldList() string {
	if len(s.Properties) == 0 {
		return "no fields"
	}
	return "fields " + strings.Join(sortedKeys(s.Properties), ", ")
}

// describe names a decoded JSON value's type, with the value when short.
func describe(v any) string {
	var kind string
	switch v.(type) {
	case bool:
		kind = "boolean"
	case string:
		kind = "string"
	case json.Number:
		kind = "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return kind
	}
	return kind + " " + string(b)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
