package observe_test

import (
	"fmt"

	"github.com/easyjob-go/easyjob/easyjob/observe"
)

// counter counts the fires it sees.
type counter struct{ fires int }

func (c *counter) Observe(e observe.Event) {
	if e.Kind == observe.EventFire {
		c.fires++
	}
}

// Observers fans every event out to several observers (nil ones are
// skipped); Config.Observer takes the result.
func ExampleObservers() {
	a, b := &counter{}, &counter{}
	o := observe.Observers(a, nil, b)
	o.Observe(observe.Event{Kind: observe.EventFire, Task: "report"})
	o.Observe(observe.Event{Kind: observe.EventRunEnd, Task: "report"})
	fmt.Println(a.fires, b.fires)
	// Output: 1 1
}
