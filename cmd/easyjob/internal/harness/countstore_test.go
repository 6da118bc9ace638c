package harness

import (
	"reflect"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
)

// TestCountingStoreCountsEveryMethod fails when repository.Store (or
// Notifier) gains a method the counting decorator does not count itself.
func TestCountingStoreCountsEveryMethod(t *testing.T) {
	counted := map[string]bool{"Close": true}
	for _, n := range methodNames {
		counted[n] = true
	}
	self := reflect.TypeOf(&countingNotifier{})
	for _, iface := range []reflect.Type{
		reflect.TypeOf((*repository.Store)(nil)).Elem(),
		reflect.TypeOf((*repository.Notifier)(nil)).Elem(),
	} {
		for i := range iface.NumMethod() {
			m := iface.Method(i).Name
			if !counted[m] {
				t.Errorf("repository.%s.%s is not counted by countingStore: add an override and a methodNames entry", iface.Name(), m)
			}
			if _, ok := self.MethodByName(m); !ok {
				t.Errorf("countingNotifier lacks %s", m)
			}
		}
	}
}
