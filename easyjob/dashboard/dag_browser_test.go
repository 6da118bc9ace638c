package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// dagOrder is the rows of the DAG view of the graph dagCluster runs:
// parents first, the shards of s under it, the chain step d-mail under d.
const dagOrder = "a,b,c,s,s[0],s[1],s[2],d,d-mail,e"

// dagCluster starts two nodes of group "dag" in this process on a fresh
// database, running a diamond a -> b, c -> d, a chain step d-mail after
// d and a 3-shard task s after a with e after its shards; it returns a
// client and a fire every task of the graph finished.
func dagCluster(t *testing.T) (*easyjob.Client, time.Time) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	store := pgtest.OpenStore(t, dsn)
	ok := func(context.Context) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	}
	for range 2 {
		nop := zerolog.Nop()
		s, err := easyjob.New(easyjob.Config{Store: store, Group: "dag", SkipMigrate: true, Logger: &nop})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{
			s.Register("a", "*/2 * * * * *", ok),
			s.Register("b", "", ok, easyjob.Parents("a")),
			s.Register("c", "", ok, easyjob.Parents("a")),
			s.Register("d", "", ok, easyjob.Parents("b", "c")),
			s.Register("d-mail", "", ok, easyjob.Parent("d")),
			s.Register("s", "", ok, easyjob.Parents("a"), easyjob.Shards(3)),
			s.Register("e", "", ok, easyjob.Parents("s")),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
		runNode(t, s, "a node of the DAG")
	}
	client, err := easyjob.NewClient(t.Context(), easyjob.Config{Store: store, Group: "dag", SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		g, err := client.FireGraph(t.Context(), "e", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for ; !g.Fire.IsZero(); g.Fire = g.Fire.Add(-2 * time.Second) { // this fire, or the one before
			if g, err = client.FireGraph(t.Context(), "e", g.Fire); err != nil {
				t.Fatal(err)
			}
			done := true
			for _, s := range g.Steps {
				done = done && len(s.Runs) > 0 && s.Runs[len(s.Runs)-1].Status == repository.ExecSucceeded
			}
			if done {
				return client, g.Fire
			}
			if time.Since(g.Fire) > 6*time.Second {
				break
			}
		}
	}
	t.Fatal("no fire ran through every task of the graph within 45s")
	return nil, time.Time{}
}

// TestBrowserDAG: a run's page of any task of a DAG draws the fire of
// that run, every task parents first with a bar on one time axis and the
// parents it waited for, shards and chain steps indented; the DAG page
// draws the same, and neither scrolls sideways on a 390 px phone; the
// JSON API answers the graph the pages draw. It skips without Chromium,
// except under CI=true.
func TestBrowserDAG(t *testing.T) {
	chromium := findChromium(t)
	client, fire := dagCluster(t)
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", New(client, Options{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	g, err := client.FireGraph(t.Context(), "d", fire)
	if err != nil {
		t.Fatal(err)
	}
	var dRun, shardRun int64
	for _, s := range g.Steps {
		if s.Task == "d" {
			dRun = s.Runs[0].ID
		}
		for _, r := range s.Runs {
			if r.Shard != nil && *r.Shard == 1 {
				shardRun = r.ID
			}
		}
	}
	b := newBrowser(t, chromium, srv.URL+"/ops")
	rows := `[...document.querySelectorAll("#dag-rows li")]`
	check := func(what string) {
		t.Helper()
		b.waitJS(what+": the rows in order", rows+`.map(l => l.dataset.task).join(",") === "`+dagOrder+`"`)
		b.waitJS(what+": a bar per row", rows+`.every(l => l.dataset.status === "succeeded" && l.querySelector("svg.dagtrack rect") !== null)`)
		b.waitJS(what+": the parents", `(() => { const a = t => document.querySelector('#dag-rows li[data-task="' + t + '"] .dagafter').textContent;
			return a("a").startsWith("root") && a("d").startsWith("after b, c") && a("e").startsWith("after s[0..2]") && a("s[1]").startsWith("after s (split)") && a("d-mail").startsWith("after d (chain step)"); })()`)
		b.waitJS(what+": d after b and c on the axis", `(() => { const x = t => document.querySelector('#dag-rows li[data-task="' + t + '"] rect');
			return +x("d").getAttribute("x") >= +x("b").getAttribute("x") + +x("b").getAttribute("width") - 1 && +x("e").getAttribute("x") >= +x("s[2]").getAttribute("x"); })()`)
	}
	b.open("/run?name=d&id=" + strconv.FormatInt(dRun, 10))
	check("d's run page")
	b.shot("dag-run")
	b.open("/run?name=s[1]&id=" + strconv.FormatInt(shardRun, 10))
	check("a shard's run page")
	at := url.QueryEscape(fire.UTC().Format(time.RFC3339Nano))
	b.open("/dag?name=a&fire=" + at)
	check("the DAG page")
	b.shot("dag")
	b.open("/task?name=e")
	b.click("#task-dag a")
	b.waitJS("the newest fire from the task page", `location.pathname.endsWith("/dag") && document.querySelectorAll("#dag-rows li").length === 10`)
	b.phone("/dag?name=e&fire="+at, "/run?name=d&id="+strconv.FormatInt(dRun, 10))

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/ops/api/v1/tasks/b/dag?fire="+at, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got easyjob.FireGraph
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET dag: %d, %v", res.StatusCode, err)
	}
	var names []string
	for _, s := range got.Steps {
		names = append(names, s.Task)
	}
	if !got.Fire.Equal(fire) || strings.Join(names, ",") != "a,b,c,s,d,d-mail,e" || !slices.Equal(got.Steps[4].Parents, []string{"b", "c"}) {
		t.Errorf("GET dag: fire %v, steps %q", got.Fire, names)
	}
}
