// Command quickstart runs three easy-job nodes in one process for ten
// seconds and prints which node ran each fire, so you can watch tasks
// spread over the nodes and a parent → child chain run in order.
//
//	go run ./examples/quickstart
//
// It uses the embedded memory store; set EASYJOB_DSN to a PostgreSQL URL
// to run the same three nodes on a real database.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// run is main's body; it returns its error so that its defers (the store's
// Close above all) run before main exits.
func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()

	store, where, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Printf("three nodes on %s, id_hash strategy, for ten seconds\n", where)

	start := time.Now()
	say := func(ctx context.Context, what string) {
		info, _ := easyjob.InfoFromContext(ctx)
		fmt.Printf("%6.3fs  node %d  %-9s %s  (fire %s)\n", time.Since(start).Seconds(),
			info.NodeID, info.Task, what, info.ScheduledAt.Format("15:04:05"))
	}
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		s, err := easyjob.New(easyjob.Config{
			Store: store, Group: "quickstart", Strategy: "id_hash",
			NodeName: fmt.Sprintf("node-%d", i), ShutdownGrace: 2 * time.Second,
		})
		if err != nil {
			return err
		}
		for _, name := range []string{"tick-a", "tick-b", "tick-c"} {
			if err := s.Register(name, "* * * * * *", func(ctx context.Context) error { say(ctx, "ran"); return nil }); err != nil {
				return err
			}
		}
		if err := s.Register("report", "*/3 * * * * *", func(ctx context.Context) error { say(ctx, "built"); return nil }); err != nil {
			return err
		}
		if err := s.Register("mail", "", func(ctx context.Context) error { say(ctx, "sent (after report)"); return nil },
			easyjob.Parent("report")); err != nil {
			return err
		}
		wg.Go(func() {
			if err := s.Run(ctx); err != nil {
				log.Print(err)
			}
		})
	}
	wg.Wait()
	fmt.Println("done: every fire ran once, on one node")
	return nil
}

func openStore(ctx context.Context) (repository.Store, string, error) {
	dsn := os.Getenv("EASYJOB_DSN")
	if dsn == "" {
		return memory.New(), "the embedded memory store", nil
	}
	pg, err := postgres.Open(ctx, dsn)
	if err != nil {
		return nil, "", err
	}
	if err := pg.Migrate(ctx); err != nil {
		return nil, "", err
	}
	return pg, postgres.RedactDSN(dsn), nil
}
