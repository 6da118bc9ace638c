package easyjob_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/memory"
)

// Every edit of a schedule keeps the definition it replaced: Versions
// lists them newest first, with who changed what and when.
func ExampleClient_Versions() {
	ctx := context.Background()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: memory.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	// The handler "report" is registered by nodes that are not running
	// yet: AllowUnknownHandler lets the schedule wait for them.
	alice := easyjob.WithActor(ctx, easyjob.Actor{Name: "alice", Via: "cli"})
	_, err = c.Create(alice, easyjob.Schedule{
		Name: "report-acme", Handler: "report", Cron: "0 6 * * *",
		Args: map[string]any{"customer": "acme", "days": 7},
	}, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	bob := easyjob.WithActor(ctx, easyjob.Actor{Name: "bob", Via: "dashboard"})
	_, err = c.Update(bob, easyjob.Schedule{
		Name: "report-acme", Handler: "report", Cron: "0 7 * * *",
		Args: map[string]any{"customer": "acme", "days": 30},
	}, easyjob.AllowUnknownHandler())
	if err != nil {
		fmt.Println(err)
		return
	}
	versions, err := c.Versions(ctx, "report-acme")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range versions {
		fmt.Printf("revision %d by %s via %s: %s %s\n", v.Revision, v.ChangedBy.Name, v.ChangedBy.Via, v.Cron, v.Args)
	}
	// Output:
	// revision 2 by bob via dashboard: 0 7 * * * {"customer":"acme","days":30}
	// revision 1 by alice via cli: 0 6 * * * {"customer":"acme","days":7}
}

// TestClientVersions: a reschedule and a reset are versions too, by the
// client's default actor when the context names none; a registered task
// has versions from its first reschedule; an unknown name is
// ErrTaskNotFound.
func TestClientVersions(t *testing.T) {
	ctx := t.Context()
	store := memory.New()
	c, err := easyjob.NewClient(ctx, easyjob.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, easyjob.Schedule{Name: "s", Handler: "h", Cron: "0 6 * * *"}, easyjob.AllowUnknownHandler()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reschedule(ctx, "s", "0 8 * * *"); err != nil {
		t.Fatal(err)
	}
	vs, err := c.Versions(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Revision != 2 || vs[0].Cron != "0 8 * * *" || vs[1].Cron != "0 6 * * *" || vs[0].Handler != "h" {
		t.Fatalf("versions = %+v, want the reschedule's (2) over the creation's (1)", vs)
	}
	if vs[0].ChangedBy.Name == "" || vs[0].ChangedBy.Via != "client" || vs[0].ChangedAt.IsZero() || vs[0].Args != nil {
		t.Errorf("version 2 = %+v, want the client's default actor and a time, no args", vs[0])
	}
	if info, err := c.Task(ctx, "s"); err != nil || info.Revision != vs[0].Revision {
		t.Errorf("task revision = %d, %v; want the newest version's %d", info.Revision, err, vs[0].Revision)
	}

	now, _ := store.Now(ctx)
	if _, err := store.UpsertTasks(ctx, "default", []repository.TaskDef{{Name: "reg", Cron: "0 0 * * *", NextStartTime: now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if vs, err := c.Versions(ctx, "reg"); err != nil || len(vs) != 0 {
		t.Errorf("versions of a registered task = %+v, %v; want none", vs, err)
	}
	if _, err := c.Reschedule(ctx, "reg", "0 1 * * *"); err != nil {
		t.Fatal(err)
	}
	if vs, err := c.Versions(ctx, "reg"); err != nil || len(vs) != 1 || vs[0].Revision != 2 || vs[0].Handler != "reg" || vs[0].Cron != "0 1 * * *" {
		t.Errorf("versions of a rescheduled registered task = %+v, %v; want its reschedule (revision 2)", vs, err)
	}
	if _, err := c.ResetSchedule(ctx, "reg"); err != nil {
		t.Fatal(err)
	}
	if vs, err := c.Versions(ctx, "reg"); err != nil || len(vs) != 2 || vs[0].Revision != 3 || vs[0].Cron != "0 0 * * *" {
		t.Errorf("versions after a reset = %+v, %v; want the code's cron back as revision 3", vs, err)
	}

	if _, err := c.Versions(ctx, "ghost"); !errors.Is(err, easyjob.ErrTaskNotFound) {
		t.Errorf("Versions of an unknown name = %v, want ErrTaskNotFound", err)
	}
}
