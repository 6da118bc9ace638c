package schedule

import (
	"fmt"
	"strings"

	"github.com/adhocore/gronx"
)

// aliases are macros gronx does not know, written as expressions it does.
var aliases = map[string]string{
	"@midnight": "0 0 * * *", // Vixie cron, robfig/cron
}

// tzPrefixes introduce the time zone of an expression: CRON_TZ= (as in
// robfig/cron and Kubernetes) and TZ= (as in robfig/cron v1).
var tzPrefixes = []string{"CRON_TZ=", "TZ="}

// fieldNames names the fields of an expression by how many it has.
var fieldNames = map[int][]string{
	5: {"minute", "hour", "day of month", "month", "day of week"},
	6: {"second", "minute", "hour", "day of month", "month", "day of week"},
	7: {"second", "minute", "hour", "day of month", "month", "day of week", "year"},
}

// invalidField explains why gronx refused expr: how many fields it has,
// or the first field that is wrong on its own, with its value.
func invalidField(expr string) error {
	f := strings.Fields(expr)
	names, ok := fieldNames[len(f)]
	if !ok {
		if strings.HasPrefix(expr, "@") {
			return fmt.Errorf("%w: %q: unknown macro", ErrInvalidCron, expr)
		}
		return fmt.Errorf("%w: %q has %d fields, want 5 (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (year last)",
			ErrInvalidCron, expr, len(f))
	}
	for i, v := range f {
		probe := make([]string, len(f))
		for k := range probe {
			probe[k] = "*"
		}
		probe[i] = v
		if !gronx.IsValid(strings.Join(probe, " ")) {
			return fmt.Errorf("%w: %q: %s field %q is not valid", ErrInvalidCron, expr, names[i], v)
		}
	}
	return fmt.Errorf("%w: %q", ErrInvalidCron, expr)
}
