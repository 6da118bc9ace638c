package schedule

import (
	"strconv"
	"strings"
	"time"
)

// simpleCron is a cron expression whose second, minute and hour fields
// are each one value or "*" and whose day, month and weekday fields are
// "*": "S M H * * *" (daily), "S M * * * *" (hourly), "M H * * *". Most
// schedules a service creates by the thousand are of this shape (a
// report per customer at the customer's time), and in UTC its fires are
// plain arithmetic: gronx, which parses the expression and steps through
// the calendar on every call, took about half the client's CPU of
// creating one (two fires computed per schedule: the check that it fires
// and its first fire). Other expressions, and other zones (their gaps and
// repeated hours), go to gronx. -1 stands for "*".
type simpleCron struct {
	sec, min, hour int
}

// parseSimple reads expr as a simpleCron; ok is false for any other
// shape, which gronx then reads.
func parseSimple(expr string) (c simpleCron, ok bool) {
	f := strings.Fields(expr)
	switch len(f) {
	case 5:
		f = append([]string{"0"}, f...)
	case 6:
	default:
		return simpleCron{}, false
	}
	if f[3] != "*" || f[4] != "*" || f[5] != "*" {
		return simpleCron{}, false
	}
	var vals [3]int
	for i, limit := range [3]int{59, 59, 23} {
		v, ok := simpleField(f[i], limit)
		if !ok {
			return simpleCron{}, false
		}
		vals[i] = v
	}
	return simpleCron{sec: vals[0], min: vals[1], hour: vals[2]}, true
}

// simpleField reads one field: "*" (-1) or a number 0..limit written
// plainly (no sign, no leading zero).
func simpleField(s string, limit int) (int, bool) {
	if s == "*" {
		return -1, true
	}
	if s == "" || len(s) > 2 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v > limit || s[0] == '+' {
		return 0, false
	}
	return v, true
}

// next returns the first fire strictly after t (UTC).
func (c simpleCron) next(t time.Time) time.Time {
	n := t.UTC().Truncate(time.Second).Add(time.Second)
	for {
		h, m, s := n.Clock()
		switch {
		case c.hour >= 0 && h != c.hour:
			day := n.Truncate(24 * time.Hour)
			if h > c.hour {
				day = day.Add(24 * time.Hour)
			}
			n = day.Add(time.Duration(c.hour) * time.Hour)
		case c.min >= 0 && m != c.min:
			hour := n.Truncate(time.Hour)
			if m > c.min {
				hour = hour.Add(time.Hour)
			}
			n = hour.Add(time.Duration(c.min) * time.Minute)
		case c.sec >= 0 && s != c.sec:
			minute := n.Truncate(time.Minute)
			if s > c.sec {
				minute = minute.Add(time.Minute)
			}
			n = minute.Add(time.Duration(c.sec) * time.Second)
		default:
			return n
		}
	}
}

// prev returns the last fire at or before t (UTC).
func (c simpleCron) prev(t time.Time) time.Time {
	p := t.UTC().Truncate(time.Second)
	for {
		h, m, s := p.Clock()
		switch {
		case c.hour >= 0 && h != c.hour:
			day := p.Truncate(24 * time.Hour)
			if h < c.hour {
				day = day.Add(-24 * time.Hour)
			}
			p = day.Add(time.Duration(c.hour)*time.Hour + time.Hour - time.Second)
		case c.min >= 0 && m != c.min:
			hour := p.Truncate(time.Hour)
			if m < c.min {
				hour = hour.Add(-time.Hour)
			}
			p = hour.Add(time.Duration(c.min)*time.Minute + time.Minute - time.Second)
		case c.sec >= 0 && s != c.sec:
			minute := p.Truncate(time.Minute)
			if s < c.sec {
				minute = minute.Add(-time.Minute)
			}
			p = minute.Add(time.Duration(c.sec) * time.Second)
		default:
			return p
		}
	}
}
