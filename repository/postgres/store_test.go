package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// These tests cover what the shared conformance suite cannot: real
// concurrency between separate pools (separate replicas) on one database.

func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	ctx := context.Background()
	const replicas, tasks = 8, 50
	group := fmt.Sprintf("pg-claim-race-%d", time.Now().UnixNano())

	first := pgtest.OpenStore(t, dsn)
	now, err := first.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defs := make([]repository.TaskDef, tasks)
	for i := range defs {
		defs[i] = repository.TaskDef{Name: fmt.Sprint("t", i), Cron: "* * * * * *", NextStartTime: now}
	}
	rows, err := first.UpsertTasks(ctx, group, defs)
	if err != nil {
		t.Fatal(err)
	}
	refs := make([]repository.TaskRef, len(rows))
	for i, r := range rows {
		refs[i] = r.Ref()
	}

	var mu sync.Mutex
	owner := map[repository.TaskID]repository.NodeID{}
	var wg sync.WaitGroup
	for i := range replicas {
		s := pgtest.OpenStore(t, dsn)
		n, err := s.RegisterNode(ctx, group, fmt.Sprint("n", i), 1)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			won, err := s.Claim(ctx, n.ID, refs)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, w := range won {
				if prev, dup := owner[w.ID]; dup {
					t.Errorf("task %d won by nodes %d and %d", w.ID, prev, n.ID)
				}
				owner[w.ID] = n.ID
			}
		}()
	}
	wg.Wait()
	if len(owner) != tasks {
		t.Fatalf("%d of %d tasks claimed", len(owner), tasks)
	}
}

// A recovery racing a start of the same claim (a zombie node resuming
// just as a peer recovers its task). StartExecution does not lock the
// fence row (see its comment), so the start may win invisibly to the
// recovery and its execution stay running; the zombie's own finish must
// then be fenced and close it. Afterwards no execution of the task may be
// running and the recovered task must be untouched by the zombie.
func TestStartExecutionRacingRecover(t *testing.T) {
	dsn := pgtest.SharedDatabase(t)
	ctx := context.Background()
	a, b := pgtest.OpenStore(t, dsn), pgtest.OpenStore(t, dsn)
	group := fmt.Sprintf("pg-start-race-%d", time.Now().UnixNano())
	now, _ := a.Now(ctx)
	n, err := a.RegisterNode(ctx, group, "zombie", 1)
	if err != nil {
		t.Fatal(err)
	}
	leftRunning := 0
	for i := range 20 {
		ts, err := a.UpsertTasks(ctx, group, []repository.TaskDef{{Name: fmt.Sprint("t", i), Cron: "* * * * * *", NextStartTime: now}})
		if err != nil {
			t.Fatal(err)
		}
		won, err := a.Claim(ctx, n.ID, []repository.TaskRef{ts[0].Ref()})
		if err != nil || len(won) != 1 {
			t.Fatalf("claim: %v", err)
		}
		held := won[0]
		var wg sync.WaitGroup
		var x repository.Execution
		var startErr, recErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			x, startErr = a.StartExecution(ctx, held.Claim(), repository.Execution{ScheduledAt: held.NextStartTime, Attempt: 1})
		}()
		go func() {
			defer wg.Done()
			var errs []error
			if errs, recErr = b.RecoverAll(ctx, []repository.Recovery{{Ref: held.Ref(), DeadNode: n.ID}}); recErr == nil {
				recErr = errs[0]
			}
		}()
		wg.Wait()
		if recErr != nil {
			t.Fatalf("recover: %v", recErr)
		}
		if startErr != nil {
			if !errors.Is(startErr, repository.ErrClaimLost) {
				t.Fatalf("start: %v", startErr)
			}
			continue
		}
		running, err := a.History(ctx, group, held.Name, repository.HistoryFilter{Status: repository.ExecRunning})
		if err != nil {
			t.Fatal(err)
		}
		leftRunning += len(running)

		recovered, err := a.Task(ctx, group, held.Name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Finish(ctx, []repository.Finish{{
			Claim: held.Claim(), Revision: held.Revision, ExecutionID: x.ID, Status: repository.ExecSucceeded,
			Next: held.NextStartTime.Add(time.Second), NextAttempt: 1, Cron: held.Cron, Keep: true,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res[0].Err, repository.ErrClaimLost) {
			t.Fatalf("round %d: zombie finish applied: %+v", i, res[0])
		}
		xs, err := a.History(ctx, group, held.Name, repository.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(xs) != 1 || xs[0].Status != repository.ExecFenced {
			t.Fatalf("round %d: executions after the zombie's finish: %+v, want one fenced", i, xs)
		}
		if after, _ := a.Task(ctx, group, held.Name); after.Version != recovered.Version || after.Status != repository.TaskPending {
			t.Fatalf("round %d: zombie finish touched the recovered task: %+v", i, after)
		}
	}
	t.Logf("%d of 20 starts won invisibly to the recovery (closed by the fenced finish)", leftRunning)
}

// A node whose pool is exhausted by its own statements still heartbeats
// and reads the live view: one connection is set aside for them, so a busy
// node is never taken for dead.
func TestHeartbeatWhilePoolIsExhausted(t *testing.T) {
	s := pgtest.OpenStore(t, pgtest.SharedDatabase(t))
	ctx := context.Background()
	group := fmt.Sprintf("pg-priority-%d", time.Now().UnixNano())
	n, err := s.RegisterNode(ctx, group, "busy", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Heartbeat(ctx, n); err != nil {
		t.Fatal(err)
	}
	// Hold every other connection of the pool.
	var held []interface{ Close() error }
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	for {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		c, err := s.DB().Conn(cctx)
		cancel()
		if err != nil {
			break // the pool is exhausted
		}
		held = append(held, c)
		if len(held) > 100 {
			t.Fatal("the pool never ran out of connections")
		}
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := s.Heartbeat(hctx, n); err != nil {
		t.Fatalf("Heartbeat with the pool exhausted (%d connections held): %v", len(held), err)
	}
	live, err := s.LiveNodes(hctx, group, time.Minute)
	if err != nil || len(live) != 1 {
		t.Fatalf("LiveNodes with the pool exhausted = %v, %v", live, err)
	}
}
