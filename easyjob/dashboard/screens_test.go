package dashboard

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSearchShownOnce: the task list shows its search term once, escaped,
// as the search box's value, whatever else the page draws (filter chips,
// pager, actions, the count), with or without a filter; an action from
// the list returns to it with the term, taken from the list's address.
func TestSearchShownOnce(t *testing.T) {
	f := newFixture(t, Options{})
	tok := f.token()
	for _, term := range []string{"zq9", `"><img src=x onerror=alert(1)>zq9`, "zq9 & <b>"} {
		for _, show := range []string{"", "&show=stale", "&show=running", "&filter=paused"} {
			path := "/tasks?q=" + url.QueryEscape(term) + show
			code, body := f.get(path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", path, code)
			}
			esc := html.EscapeString(term)
			if n := strings.Count(body, "zq9"); n != 1 || !strings.Contains(body, `name="q" value="`+esc+`"`) {
				t.Errorf("GET %s: the term %d times, want once, as the input's value %q:\n%s", path, n, esc, body)
			}
			if strings.Contains(term, "<") && strings.Contains(body, term) {
				t.Errorf("GET %s: the term unescaped", path)
			}
		}
	}
	// The form's chip: a filter, the term kept by the form itself.
	if _, body := f.get("/tasks?q=orph&filter=stale"); !strings.Contains(body, `data-task="orphan"`) || !strings.Contains(body, `<button name="filter" value="stale" class="on">`) {
		t.Errorf("the stale chip with a search: no orphan, or not on")
	}
	// The way back after an action on the list.
	list := f.srv.URL + "/ops/tasks?q=orph&show=stale"
	code, _ := f.post(url.Values{"op": {"pause"}, "name": {"orphan"}, "csrf": {tok}, "back": {"?show=stale"}}, "Referer", list)
	if code != http.StatusSeeOther {
		t.Fatalf("pause from the list: %d", code)
	}
	req := newRequest(t, http.MethodPost, "/action", "")
	req.Header.Set("Referer", list)
	req.Host = strings.TrimPrefix(f.srv.URL, "http://")
	req.PostForm = url.Values{"back": {"?show=stale"}}
	if got, want := backTo(req, "pause", "orphan"), "/tasks?q=orph&show=stale&done=pause&task=orphan"; got != want {
		t.Errorf("back to %q, want %q", got, want)
	}
	req.Header.Set("Referer", "http://elsewhere.example/tasks?q=evil")
	if got, want := backTo(req, "pause", "orphan"), "/tasks?show=stale&done=pause&task=orphan"; got != want {
		t.Errorf("back from another site to %q, want %q", got, want)
	}
}

// TestRunningNotDoing: a task whose fire is claimed (the store's status
// doing) is shown as running, on every page and filter; the old filter
// link ?show=doing still lists it.
func TestRunningNotDoing(t *testing.T) {
	f := newFixture(t, Options{})
	if st := f.task("report").Status; st != "doing" {
		t.Fatalf("report is %s, want doing (claimed)", st)
	}
	for _, path := range []string{"/", "/tasks", "/tasks?show=running", "/tasks?show=doing", "/task?name=report", "/task?name=mail", "/nodes"} {
		code, body := f.get(path)
		if code != http.StatusOK || strings.Contains(strings.ToLower(body), "doing") {
			t.Errorf("GET %s: %d, or the word doing in it", path, code)
		}
		if strings.HasPrefix(path, "/tasks?") && !strings.Contains(body, `data-task="report" data-owner="`) {
			t.Errorf("GET %s: report not listed", path)
		}
	}
	if _, body := f.get("/tasks"); !strings.Contains(body, `<span class="status running">running</span>`) {
		t.Error("the task list does not say running")
	}
}
