// Package argschema describes the Go type of a handler's arguments as a
// small JSON Schema, and checks JSON arguments against it. Nodes publish
// the schema of each handler kind (repository.HandlerDef), so a tool that
// lacks the handler's code (the CLI, the dashboard, another service) can
// refuse arguments that would not decode before it writes a schedule,
// with an error that names the field.
//
// The schema covers what encoding/json decodes: objects from structs
// (json tags honoured, embedded structs flattened, unknown fields
// refused) and string-keyed maps, arrays, strings, numbers, integers,
// booleans, and null for pointers. A type with its own UnmarshalJSON or
// UnmarshalText accepts anything here; its own decoder judges it on the
// node.
package argschema
