package schedule

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// The computed fires of a simple cron are gronx's, forwards and
// backwards, from any instant (whole seconds or not).
func TestSimpleCronMatchesGronx(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	field := func(limit int) string {
		if r.IntN(3) == 0 {
			return "*"
		}
		return fmt.Sprint(r.IntN(limit + 1))
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 400 {
		expr := fmt.Sprintf("%s %s %s * * *", field(59), field(59), field(23))
		if r.IntN(4) == 0 {
			expr = fmt.Sprintf("%s %s * * *", field(59), field(23))
		}
		fast, err := Parse(expr, "")
		if err != nil || !fast.isSimple {
			t.Fatalf("%q: simple %v, err %v", expr, fast.isSimple, err)
		}
		slow := Schedule{expr: expr, loc: time.UTC} // gronx's
		for range 25 {
			at := base.Add(time.Duration(r.Int64N(int64(3 * 365 * 24 * time.Hour))))
			if r.IntN(2) == 0 {
				at = at.Truncate(time.Second)
			}
			fn, fok := fast.Next(at)
			sn, sok := slow.Next(at)
			if fok != sok || !fn.Equal(sn) {
				t.Fatalf("%q Next(%v) = %v %v, gronx %v %v", expr, at, fn, fok, sn, sok)
			}
			fp, fok := fast.Prev(at)
			sp, sok := slow.Prev(at)
			if fok != sok || !fp.Equal(sp) {
				t.Fatalf("%q Prev(%v) = %v %v, gronx %v %v", expr, at, fp, fok, sp, sok)
			}
		}
	}
}

// Only the plain shape is computed: anything else, or another zone, is
// gronx's.
func TestSimpleCronShape(t *testing.T) {
	for expr, want := range map[string]bool{
		"5 30 9 * * *": true, "* * * * * *": true, "30 9 * * *": true, "0 * * * * *": true,
		"05 30 9 * * *": false, "5 30 24 * * *": false, "60 * * * * *": false, "*/5 * * * * *": false,
		"0 0 9 * * 1": false, "0 0 9 1 * *": false, "0 0 9 ? * *": false, "1-2 * * * * *": false,
		"0 0 9 * * * 2027": false, "+5 * * * * *": false, "-1 * * * * *": false,
	} {
		if _, ok := parseSimple(expr); ok != want {
			t.Errorf("parseSimple(%q) = %v, want %v", expr, ok, want)
		}
	}
	s, err := Parse("0 30 9 * * *", "Europe/Paris")
	if err != nil || s.isSimple {
		t.Fatalf("a zone other than UTC computed: %v %v", s.isSimple, err)
	}
}

func BenchmarkParseNextDaily(b *testing.B) {
	now := time.Now()
	for i := 0; b.Loop(); i++ {
		s, err := Parse(fmt.Sprintf("%d %d %d * * *", i%60, i/60%60, i/3600%24), "")
		if err != nil {
			b.Fatal(err)
		}
		s.Next(now)
	}
}
