package strategy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/strategy"
)

var seq atomic.Int64

// uniqueName returns a name not registered before in this process, so the
// tests also pass with -count > 1.
func uniqueName(t *testing.T) string {
	return fmt.Sprintf("%s_%d", t.Name(), seq.Add(1))
}

func never([]repository.Node, repository.Task, repository.NodeID) bool { return false }

func TestLookupBuiltins(t *testing.T) {
	live := withWeights(1, 2, 3)
	for _, tt := range []struct {
		name string
		want strategy.Strategy
	}{
		{"", strategy.Default},
		{strategy.NameDefault, strategy.Default},
		{strategy.NameIDHash, strategy.IDHash},
		{strategy.NameLeastCount, strategy.LeastCount},
		{strategy.NameWeight, strategy.Weight},
	} {
		s, err := strategy.Lookup(tt.name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", tt.name, err)
		}
		for id := repository.TaskID(0); id < 12; id++ {
			for _, n := range live {
				if got, want := s.Accept(live, task(id), n.ID), tt.want.Accept(live, task(id), n.ID); got != want {
					t.Fatalf("Lookup(%q) behaves unlike the exported value at task %d node %d", tt.name, id, n.ID)
				}
			}
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	s, err := strategy.Lookup("no_such_strategy")
	if !errors.Is(err, strategy.ErrUnknownStrategy) {
		t.Fatalf("Lookup(unknown) error = %v, want ErrUnknownStrategy", err)
	}
	if !strings.Contains(err.Error(), `"no_such_strategy"`) {
		t.Errorf("error %q does not name the strategy", err)
	}
	if s != nil {
		t.Errorf("Lookup(unknown) returned a strategy")
	}
}

func TestRegister(t *testing.T) {
	name := uniqueName(t)
	if err := strategy.Register(name, strategy.Func(never)); err != nil {
		t.Fatalf("Register: %v", err)
	}
	s, err := strategy.Lookup(name)
	if err != nil {
		t.Fatalf("Lookup after Register: %v", err)
	}
	if s.Accept(nodes(1), task(1), 1) {
		t.Error("looked-up strategy is not the registered one")
	}
	if !slices.Contains(strategy.Names(), name) {
		t.Errorf("Names() = %v lacks %q", strategy.Names(), name)
	}
}

func TestRegisterErrors(t *testing.T) {
	dup := uniqueName(t)
	if err := strategy.Register(dup, strategy.Default); err != nil {
		t.Fatal(err)
	}
	var nilFunc strategy.Func
	tests := []struct {
		name    string
		regName string
		s       strategy.Strategy
		dup     bool
	}{
		{"empty name", "", strategy.Default, false},
		{"nil strategy", uniqueName(t), nil, false},
		{"nil Func", uniqueName(t), nilFunc, false},
		{"duplicate", dup, strategy.Default, true},
		{"replace default", strategy.NameDefault, strategy.Func(never), true},
		{"replace id_hash", strategy.NameIDHash, strategy.Func(never), true},
		{"replace least_count", strategy.NameLeastCount, strategy.Func(never), true},
		{"replace weight", strategy.NameWeight, strategy.Func(never), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strategy.Register(tt.regName, tt.s)
			if err == nil {
				t.Fatal("Register succeeded")
			}
			if got := errors.Is(err, strategy.ErrDuplicateStrategy); got != tt.dup {
				t.Errorf("errors.Is(%v, ErrDuplicateStrategy) = %v, want %v", err, got, tt.dup)
			}
		})
	}
	// The built-ins are untouched.
	s, err := strategy.Lookup(strategy.NameDefault)
	if err != nil || !s.Accept(nil, task(1), 1) {
		t.Fatalf("default was replaced (err %v)", err)
	}
}

func TestNamesSorted(t *testing.T) {
	names := strategy.Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() = %v, not sorted", names)
	}
	for _, n := range []string{"default", "id_hash", "least_count", "weight"} {
		if !slices.Contains(names, n) {
			t.Errorf("Names() = %v lacks built-in %q", names, n)
		}
	}
}

func TestRegistryConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		name := uniqueName(t)
		wg.Go(func() {
			if err := strategy.Register(name, strategy.Default); err != nil {
				t.Error(err)
			}
			if _, err := strategy.Lookup(name); err != nil {
				t.Error(err)
			}
			_ = strategy.Names()
		})
	}
	wg.Wait()
}
