package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/easyjob-go/easyjob/easyjob/dashboard"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// groupsFlags is the setup of `easyjob groups`: every group of the
// database with the counts of the dashboard's all-groups overview.
func groupsFlags(*flag.FlagSet) action {
	return func(ctx context.Context, e *env, _ []string) error {
		v, err := dashboard.ReadGroups(ctx, e.client, nil)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(struct {
				Now    time.Time                `json:"now"`
				Groups []dashboard.GroupSummary `json:"groups"`
			}{v.Now, nonNil(v.Groups)})
		}
		if len(v.Groups) == 0 {
			_, err := fmt.Fprintln(e.out, "no group has tasks or nodes in this database yet: a node registers its tasks when it starts")
			return err
		}
		t := newTable(e.out, "GROUP", "TASKS", "RUNNING", "PAUSED", "FAILING", "LIVE NODES", "FIRES/MIN", "FAILURES/H", "LAST FAILURE")
		for _, g := range v.Groups {
			t.row(g.Group, strconv.Itoa(g.Tasks), strconv.Itoa(g.Running), strconv.Itoa(g.Paused), strconv.Itoa(g.Failing),
				fmt.Sprintf("%d/%d", g.Live, g.Nodes), atLeast(g.Fires, g.FiresCapped), atLeast(g.Failures, g.FailuresCapped),
				relTime(g.LastFailure, v.Now))
		}
		t.flush()
		return nil
	}
}

// atLeast prints a count, marked when it is a lower bound.
func atLeast(n int, capped bool) string {
	if capped {
		return ">=" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// maxGroupsNamed bounds the groups an error lists.
const maxGroupsNamed = 20

// onlyGroup is the group of a command given no --group: the database's
// only group, "default" when it has none; an error listing them when it
// has several.
func onlyGroup(ctx context.Context, s *postgres.Store) (string, error) {
	gs, err := s.GroupSummaries(ctx, repository.GroupQuery{Limit: maxGroupsNamed + 1})
	if err != nil {
		return "", err
	}
	switch len(gs) {
	case 0:
		return "default", nil
	case 1:
		return gs[0].Group, nil
	}
	names := make([]string, 0, len(gs))
	for _, g := range gs[:min(len(gs), maxGroupsNamed)] {
		names = append(names, g.Group)
	}
	more := ""
	if len(gs) > maxGroupsNamed {
		more = ", … ('easyjob groups' lists them all)"
	}
	return "", usagef("%w, and the database holds several groups (%s%s): choose one with --group NAME", errSeveralGroups, strings.Join(names, ", "), more)
}

// errSeveralGroups: no --group, and the database holds several.
var errSeveralGroups = errors.New("no --group given")
