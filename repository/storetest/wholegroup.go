package storetest

import (
	"context"
	"testing"

	"github.com/easyjob-go/easyjob/repository"
)

// NoWholeGroupReads wraps s so that a read of every task of a group
// (Tasks) fails tb: an action on one task must cost what its chain does,
// whatever the group holds (a million runtime schedules).
func NoWholeGroupReads(tb testing.TB, s repository.Store) repository.Store {
	return wholeGroupGuard{Store: s, tb: tb}
}

type wholeGroupGuard struct {
	repository.Store
	tb testing.TB
}

func (s wholeGroupGuard) Tasks(ctx context.Context, group string) ([]repository.Task, error) {
	s.tb.Errorf("Tasks(%q) read the whole group", group)
	return s.Store.Tasks(ctx, group)
}
