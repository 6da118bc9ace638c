package dashboard

import (
	"fmt"
	"strconv"
	"strings"
)

// describeCron says a cron expression (5, 6 or 7 fields, as easyjob
// accepts them) in words: "every 10 seconds", "at 03:30 on Monday to
// Friday". An expression it cannot put simply is described field by
// field; it never fails (validation is easyjob's).
func describeCron(expr, tz string) string {
	expr = strings.TrimSpace(expr)
	if rest, ok := strings.CutPrefix(expr, "CRON_TZ="); ok {
		tz, expr, _ = strings.Cut(rest, " ")
		expr = strings.TrimSpace(expr)
	}
	if expr == "" {
		return "after every successful run of its parent"
	}
	s := describeFields(expr)
	if tz != "" && tz != "UTC" {
		s += " (" + tz + ")"
	}
	return s
}

var cronMacros = map[string]string{
	"@yearly": "0 0 0 1 1 *", "@annually": "0 0 0 1 1 *", "@monthly": "0 0 0 1 * *",
	"@weekly": "0 0 0 * * 0", "@daily": "0 0 0 * * *", "@midnight": "0 0 0 * * *",
	"@hourly": "0 0 * * * *", "@always": "* * * * * *", "@everysecond": "* * * * * *",
	"@everyminute": "0 * * * * *", "@5minutes": "0 */5 * * * *", "@10minutes": "0 */10 * * * *",
	"@15minutes": "0 */15 * * * *", "@30minutes": "0 */30 * * * *",
}

func describeFields(expr string) string {
	if m, ok := cronMacros[strings.ToLower(expr)]; ok {
		expr = m
	}
	f := strings.Fields(strings.ReplaceAll(expr, "?", "*"))
	switch len(f) {
	case 5:
		f = append([]string{"0"}, f...)
	case 6, 7:
	default:
		return expr
	}
	sec, mins, hour := f[0], f[1], f[2]
	out := timeWords(sec, mins, hour)
	_, domOK := number(f[3])
	monOK := monthName(f[4]) != f[4] // one month, by number or name
	switch days := dayWords(f[3], f[5]); {
	case domOK && monOK && f[5] == "*": // a date: "on 1 January"
		out = "every year on " + f[3] + " " + monthName(f[4]) + " " + out
	case days != "":
		out += " " + days
	case strings.HasPrefix(out, "at "):
		out = "every day " + out
	}
	if f[4] != "*" && !(domOK && monOK && f[5] == "*") {
		out += " in " + listWords(f[4], "month", monthName)
	}
	if len(f) == 7 && f[6] != "*" {
		out += " " + listWords(f[6], "year", nil)
	}
	return out
}

// timeWords describes the second, minute and hour fields.
func timeWords(sec, mins, hour string) string {
	s, sOK := number(sec)
	m, mOK := number(mins)
	h, hOK := number(hour)
	atSec := ""
	if sOK && s != 0 {
		atSec = fmt.Sprintf(" at second %d", s)
	}
	switch {
	case sec == "*" && mins == "*" && hour == "*":
		return "every second"
	case step(sec) > 0 && mins == "*" && hour == "*":
		return every(step(sec), "second")
	case sOK && mins == "*" && hour == "*":
		return "every minute" + atSec
	case sOK && step(mins) > 0 && hour == "*":
		return every(step(mins), "minute") + atSec
	case sOK && mOK && hour == "*":
		return fmt.Sprintf("every hour at minute %d", m) + atSec
	case sOK && mOK && step(hour) > 0:
		return every(step(hour), "hour") + fmt.Sprintf(" at minute %d", m) + atSec
	case sOK && mOK && hOK:
		return "at " + clockWords(h, m, s)
	case sOK && mOK && isList(hour):
		parts := strings.Split(hour, ",")
		for i, p := range parts {
			hh, _ := number(p)
			parts[i] = clockWords(hh, m, s)
		}
		return "at " + joinAnd(parts)
	}
	return strings.Join([]string{
		listWords(sec, "second", nil), listWords(mins, "minute", nil), listWords(hour, "hour", nil),
	}, ", ")
}

// dayWords describes the day-of-month and day-of-week fields ("" for any day).
func dayWords(dom, dow string) string {
	var parts []string
	switch {
	case dom == "*":
	case strings.EqualFold(dom, "L"):
		parts = append(parts, "on the last day of the month")
	default:
		parts = append(parts, "on "+listWords(dom, "day", nil)+" of the month")
	}
	if dow != "*" {
		parts = append(parts, "on "+listWords(dow, "weekday", dayName))
	}
	return strings.Join(parts, " and ")
}

// listWords describes one field: "every 5th minute", "minutes 1 to 5",
// "Monday, Wednesday and Friday".
func listWords(field, unit string, name func(string) string) string {
	if field == "*" {
		return "every " + unit
	}
	if n := step(field); n > 0 {
		return every(n, unit)
	}
	items := strings.Split(field, ",")
	for i, it := range items {
		if lo, hi, ok := strings.Cut(it, "-"); ok && name != nil {
			items[i] = name(lo) + " to " + name(hi)
		} else if ok {
			items[i] = lo + " to " + hi
		} else if name != nil {
			items[i] = name(it)
		}
	}
	if name != nil {
		return joinAnd(items)
	}
	return unit + " " + joinAnd(items)
}

func every(n int, unit string) string {
	if n == 1 {
		return "every " + unit
	}
	return fmt.Sprintf("every %d %ss", n, unit)
}

// step returns N of "*/N" or "0/N", else 0.
func step(field string) int {
	for _, p := range []string{"*/", "0/"} {
		if rest, ok := strings.CutPrefix(field, p); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

func number(field string) (int, bool) {
	n, err := strconv.Atoi(field)
	return n, err == nil && n >= 0
}

func isList(field string) bool {
	for _, p := range strings.Split(field, ",") {
		if _, ok := number(p); !ok {
			return false
		}
	}
	return true
}

func clockWords(h, m, s int) string {
	if s != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

var (
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	monthNames = []string{"", "January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
)

func dayName(s string) string   { return named(s, dayNames, 0) }
func monthName(s string) string { return named(s, monthNames, 1) }

// named maps a number or a three-letter abbreviation to its name.
func named(s string, names []string, first int) string {
	if n, ok := number(s); ok && n >= first && n < len(names) {
		return names[n]
	}
	for _, n := range names[first:] {
		if len(s) == 3 && strings.EqualFold(n[:3], s) {
			return n
		}
	}
	return s
}
