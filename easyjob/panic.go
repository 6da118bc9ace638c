package easyjob

import (
	"fmt"
	"runtime/debug"
)

// PanicError is the error a run fails with when its job panics.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("easyjob: job panicked: %v", e.Value) }

func panicError(v any) error { return &PanicError{Value: v, Stack: debug.Stack()} }
