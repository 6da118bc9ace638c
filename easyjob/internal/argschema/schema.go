package argschema

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Schema is the subset of JSON Schema this package writes and checks.
type Schema struct {
	Type       string             `json:"type,omitempty"` // "" accepts anything
	Nullable   bool               `json:"nullable,omitempty"`
	Format     string             `json:"format,omitempty"`
	Minimum    *float64           `json:"minimum,omitempty"`
	Properties map[string]*Schema `json:"properties,omitempty"`
	// Additional is the schema of an object's other members: nil refuses
	// them (a struct), set for a map's values.
	Additional *Schema `json:"additionalProperties,omitempty"`
	Items      *Schema `json:"items,omitempty"`
	GoType     string  `json:"x-go-type,omitempty"` // for error messages
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[time.Time]()
)

// Of returns the schema of values of type t as encoding/json decodes
// them.
func Of(t reflect.Type) *Schema { return of(t, map[reflect.Type]bool{}) }

// For returns the schema of A.
func For[A any]() *Schema { return Of(reflect.TypeFor[A]()) }

func of(t reflect.Type, seen map[reflect.Type]bool) *Schema {
	if t == timeType {
		return &Schema{Type: "string", Format: "date-time", GoType: t.String()}
	}
	if t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		return &Schema{GoType: t.String()} // its own decoder judges
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := *of(t.Elem(), seen)
		s.Nullable = true
		return &s
	case reflect.Bool:
		return &Schema{Type: "boolean", GoType: t.String()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Schema{Type: "integer", GoType: t.String()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := 0.0
		return &Schema{Type: "integer", Minimum: &zero, GoType: t.String()}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number", GoType: t.String()}
	case reflect.String:
		return &Schema{Type: "string", GoType: t.String()}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte", Nullable: true, GoType: t.String()} // base64
		}
		return &Schema{Type: "array", Nullable: true, Items: of(t.Elem(), seen), GoType: t.String()}
	case reflect.Array:
		return &Schema{Type: "array", Items: of(t.Elem(), seen), GoType: t.String()}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return &Schema{Type: "object", Nullable: true, Additional: &Schema{}, GoType: t.String()}
		}
		return &Schema{Type: "object", Nullable: true, Additional: of(t.Elem(), seen), GoType: t.String()}
	case reflect.Struct:
		if seen[t] {
			return &Schema{Type: "object", GoType: t.String()} // recursive: checked by the node's decoder
		}
		seen[t] = true
		defer delete(seen, t)
		s := &Schema{Type: "object", Properties: map[string]*Schema{}, GoType: t.String()}
		addFields(s, t, seen)
		return s
	}
	return &Schema{GoType: t.String()} // interface{} and the like: anything
}

// addFields adds the JSON members of struct t to s, flattening embedded
// structs as encoding/json does (the outer field wins a name).
func addFields(s *Schema, t reflect.Type, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				inner := &Schema{Properties: map[string]*Schema{}}
				addFields(inner, ft, seen)
				for k, v := range inner.Properties {
					if _, taken := s.Properties[k]; !taken {
						s.Properties[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.Properties[name] = of(f.Type, seen)
	}
}
