package schedule

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	c := NewCache(2)
	a, err := c.Parse("0 0 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Parse("0 0 * * * *", "")
	if a.memo == nil || a.memo != b.memo {
		t.Fatal("two parses of one expression do not share a tick memo")
	}
	if p, _ := c.Parse("0 0 * * * *", "Europe/Paris"); p.memo == a.memo || p.Location().String() != "Europe/Paris" {
		t.Fatal("another zone shares the UTC entry")
	}
	if _, err := c.Parse("61 * * * * *", ""); !errors.Is(err, ErrInvalidCron) {
		t.Fatalf("an invalid expression: %v", err)
	}
	c.Parse("@every 5s", "") //nolint:errcheck // fills the cache past max
	if len(c.m) > 2 {
		t.Fatalf("the cache holds %d entries, max 2", len(c.m))
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if n, _ := b.Next(at); !n.Equal(at.Add(time.Hour)) {
		t.Fatalf("a cached schedule's next: %v", n)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(100)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				s, err := c.Parse([]string{"0 0 * * * *", "*/5 * * * * *", "@every 7s"}[(i+j)%3], "")
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok := s.Next(time.Now()); !ok {
					t.Error("no next fire")
				}
			}
		})
	}
	wg.Wait()
}
