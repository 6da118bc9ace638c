package strategy

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrUnknownStrategy is wrapped by the error [Lookup] returns for a name
// that is not registered.
var ErrUnknownStrategy = errors.New("strategy: unknown strategy")

// ErrDuplicateStrategy is wrapped by the error [Register] returns for a
// name that is already registered (the built-ins included).
var ErrDuplicateStrategy = errors.New("strategy: strategy already registered")

// registry is the package's one piece of global state: strategies by name,
// like database/sql's driver registry. The built-ins are in it from the
// start and cannot be replaced.
var registry = struct {
	sync.RWMutex
	byName map[string]Strategy
}{byName: map[string]Strategy{
	NameDefault:    Func(acceptDefault),
	NameIDHash:     Func(acceptIDHash),
	NameLeastCount: LeastCount,
	NameWeight:     Func(acceptWeight),
}}

// Register makes s available under name. It fails when name is empty,
// when s is nil, or when name is already registered; built-in names are
// always registered, so built-ins cannot be replaced. It is safe for
// concurrent use, and is typically called from an init function.
func Register(name string, s Strategy) error {
	if name == "" {
		return errors.New("strategy: register: empty name")
	}
	if f, ok := s.(Func); s == nil || ok && f == nil {
		return fmt.Errorf("strategy: register %q: nil strategy", name)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateStrategy, name)
	}
	registry.byName[name] = s
	return nil
}

// Lookup returns the strategy registered under name; "" means
// [NameDefault]. An unknown name yields an error wrapping
// [ErrUnknownStrategy].
func Lookup(name string) (Strategy, error) {
	if name == "" {
		name = NameDefault
	}
	registry.RLock()
	s, ok := registry.byName[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownStrategy, name)
	}
	return s, nil
}

// Names returns the registered names, built-ins included, sorted.
func Names() []string {
	registry.RLock()
	names := make([]string, 0, len(registry.byName))
	for name := range registry.byName {
		names = append(names, name)
	}
	registry.RUnlock()
	slices.Sort(names)
	return names
}
