package storetest

import (
	"errors"
	"reflect"

	"github.com/easyjob-go/easyjob/repository"
)

// The exclusion calendars (CalendarStore): put, replace, list, remove,
// each group apart, each write audited.
var calendarCases = []testCase{
	{"PutListRemove", testCalendars},
}

func testCalendars(e *env) {
	if cs, err := e.s.Calendars(e.ctx, e.g); err != nil || len(cs) != 0 {
		e.t.Fatalf("Calendars of a new group = %+v, %v; want none", cs, err)
	}
	holidays := repository.Calendar{
		Name: "holidays", Timezone: "Europe/Paris", Dates: []string{"2026-12-25", "2027-01-01"},
		Ranges: []repository.DateRange{{From: "2026-08-01", To: "2026-08-15"}}, Note: "closed",
	}
	ctx := repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "calendar", Detail: "put holidays"})
	put, err := e.s.PutCalendar(ctx, e.g, holidays)
	if err != nil {
		e.t.Fatalf("PutCalendar: %v", err)
	}
	if put.UpdatedAt.IsZero() {
		e.t.Errorf("PutCalendar: UpdatedAt not set")
	}
	holidays.Dates[0] = "changed by the caller after the put"
	weekends := repository.Calendar{Name: "weekends", Crons: []string{"* * * * 0,6"}}
	if _, err := e.s.PutCalendar(e.ctx, e.g, weekends); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.PutCalendar(e.ctx, e.other(), repository.Calendar{Name: "holidays"}); err != nil {
		e.t.Fatal(err)
	}
	cs, err := e.s.Calendars(e.ctx, e.g)
	if err != nil || len(cs) != 2 || cs[0].Name != "holidays" || cs[1].Name != "weekends" {
		e.t.Fatalf("Calendars = %+v, %v; want holidays, weekends", cs, err)
	}
	got := cs[0]
	got.UpdatedAt = put.UpdatedAt
	want := put
	want.Dates = []string{"2026-12-25", "2027-01-01"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(cs[1].Crons, weekends.Crons) {
		e.t.Errorf("Calendars[0] = %+v, want %+v", got, want)
	}

	// Replace: the whole calendar, not a merge.
	if _, err := e.s.PutCalendar(e.ctx, e.g, repository.Calendar{Name: "holidays", Dates: []string{"2026-05-01"}}); err != nil {
		e.t.Fatal(err)
	}
	cs, _ = e.s.Calendars(e.ctx, e.g)
	if len(cs) != 2 || !reflect.DeepEqual(cs[0].Dates, []string{"2026-05-01"}) || cs[0].Ranges != nil || cs[0].Timezone != "" {
		e.t.Errorf("replaced holidays = %+v; want only its new date", cs[0])
	}

	ctx = repository.WithAudit(e.ctx, repository.AuditEntry{Actor: auditActor, Action: "calendar", Detail: "remove weekends"})
	if err := e.s.RemoveCalendar(ctx, e.g, "weekends"); err != nil {
		e.t.Fatalf("RemoveCalendar: %v", err)
	}
	if err := e.s.RemoveCalendar(ctx, e.g, "weekends"); !errors.Is(err, repository.ErrCalendarNotFound) {
		e.t.Errorf("RemoveCalendar twice: %v, want ErrCalendarNotFound", err)
	}
	if cs, _ := e.s.Calendars(e.ctx, e.other()); len(cs) != 1 {
		e.t.Errorf("the other group's calendars = %+v; want its own one", cs)
	}
	log, err := e.s.Audit(e.ctx, e.g, repository.AuditFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	var details []string
	for _, a := range log {
		if a.Action == "calendar" && a.Actor == auditActor {
			details = append(details, a.Detail)
		}
	}
	if !reflect.DeepEqual(details, []string{"remove weekends", "put holidays"}) {
		e.t.Errorf("audited calendar writes %q, want the removal and the put (newest first), once each", details)
	}
}
