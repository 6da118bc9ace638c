package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository/postgres/pgtest"
)

// TestBrowser drives the dashboard in headless Chromium against a real
// cluster: three node processes (this test binary, see TestMain) on a
// fresh PostgreSQL database. It loads every view, triggers and pauses a
// task by clicking and sees the run appear (a manual run) and the
// trigger in the task's operator actions, previews and saves a new
// schedule, creates a schedule from the form (a refusal shown inline
// first), checks that pages fit a phone's screen, sees the three actions
// in the audit log, kills a node and sees it turn dead and its tasks move, and
// measures the queries one open dashboard costs. Screenshots of each view
// go to $EASYJOB_ARTIFACTS (default: <tmp>/easyjob-artifacts)/dashboard.
//
// It skips without Chromium, except under CI=true (.ci/run installs it).
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	dsn := pgtest.NewDatabase(t)
	pgtest.OpenStore(t, dsn) // migrates
	store, queries := countingStore(t, dsn)
	ctx := t.Context()
	client, err := easyjob.NewClient(ctx, easyjob.Config{Store: store, Group: "web", SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })

	logs := t.TempDir()
	procs := map[string]*nodeProc{}
	for _, name := range []string{"n1", "n2", "n3"} {
		procs[name] = startNode(t, dsn, "web", name, logs)
	}
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", New(client, Options{})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := newBrowser(t, chromium, srv.URL+"/ops")
	defer func() {
		if t.Failed() {
			t.Logf("node logs in %s", logs)
		}
	}()

	// Overview: three live nodes, fires on the timeline.
	b.open("/")
	b.waitJS("three live nodes", `document.getElementById("live-nodes").textContent === "3"`)
	b.waitJS("fires on the timeline", `document.querySelectorAll("rect.run").length >= 10`)
	b.waitJS("chain steps on the timeline, linked to their run", `document.querySelectorAll("rect.run.step").length >= 2 && document.querySelector("line.chainlink") !== null`)
	b.waitJS("fires per second by node", `document.querySelectorAll("#chart-fires rect.bar").length >= 3 && document.querySelectorAll("#chart-fires i.k").length >= 2`)
	b.shot("overview")

	// Tasks: every task, the script-like names as text, nothing injected.
	b.open("/tasks")
	b.waitJS("nine tasks", `document.querySelectorAll("tr[data-task]").length === 9`)
	b.waitJS("script names shown as text", fmt.Sprintf(
		`[...document.querySelectorAll("a.name")].map(a => a.textContent).filter(s => s === %q || s === %q).length === 2`,
		scriptName, imgName))
	b.shot("tasks")
	// A search kept by the filter chips, shown once: in the search box.
	b.open("/tasks?q=tick")
	b.click(`.chips button[value="all"]`)
	b.waitJS("the chain tick, tick-mail, tick-archive", `location.search.includes("q=tick") && document.querySelectorAll("tr[data-task]").length === 3`)
	b.waitJS("the term in the search box only", `document.querySelector('input[name="q"]').value === "tick" && !document.querySelector("h1").textContent.includes("tick") && document.querySelectorAll('[value="tick"]:not([name="name"])').length === 1`)
	b.waitJS("running, never doing", `!/doing/i.test(document.getElementById("live").textContent)`)

	// The charts of a task: start lag, duration, outcomes.
	b.open("/task?name=flaky")
	b.waitJS("lag and duration dots, outcome bars", `document.querySelectorAll("#chart-lag circle.pt").length >= 2 && document.querySelectorAll("#chart-duration circle.pt").length >= 2 && document.querySelector("#chart-outcomes rect.bar.bad") !== null && document.querySelector("#chart-outcomes rect.bar.ok") !== null`)
	b.shot("task-charts")

	// Trigger "manual" (yearly) by clicking; its run appears.
	b.open("/task?name=manual")
	b.waitJS("no run yet", `document.querySelector("#runs tr[data-run]") === null`)
	b.click(`#task-actions button[value="trigger"]`)
	b.waitJS("the flash", `document.querySelector(".flash") !== null`)
	b.waitJS("the triggered run", `document.querySelector('#runs tr[data-status="succeeded"]') !== null`)
	b.waitJS("the run's kind manual", `document.querySelector('#runs tr[data-kind="manual"] .kind.manual') !== null`)
	b.waitJS("the trigger in the operator actions", `document.querySelector('#operator-actions tr[data-action="trigger"]') !== null`)
	b.shot("task")

	// Pause "pausable" (every second) by clicking.
	b.open("/task?name=pausable")
	b.click(`#task-actions button[value="pause"]`)
	b.waitJS("paused", `document.querySelector('#task-status .status.paused') !== null && document.querySelector('#task-actions button[value="resume"]') !== null`)
	if ti, err := client.Task(ctx, "pausable"); err != nil || !ti.Paused {
		t.Fatalf("after clicking pause: %+v, %v", ti, err)
	}

	// Reschedule "slow": an invalid cron is refused, a valid one previewed
	// with its next fires, then saved.
	b.open("/task?name=slow")
	b.setValue(`form.reschedule input[name="cron"]`, "61 * * * *")
	b.click(`#preview`)
	b.waitJS("invalid cron refused", `document.getElementById("invalid") !== null`)
	b.setValue(`input[name="cron"]`, "*/6 * * * * *")
	b.click(`#preview`)
	b.waitJS("five next fires", `document.querySelectorAll("#next-fires li").length === 5`)
	b.shot("reschedule")
	b.click(`#save`)
	b.waitJS("back on the task page", `document.querySelector(".flash") !== null`)
	if ti, err := client.Task(ctx, "slow"); err != nil || ti.Cron != "*/6 * * * * *" {
		t.Fatalf("after saving the schedule: %+v, %v", ti, err)
	}

	// A schedule from the form: args its handler refuses come back inline
	// with the library's message; fixed, it is created and its page
	// shows its handler and args.
	b.open("/schedule/new")
	b.waitJS("the handler echo offered", `document.querySelector('#handlers option[value="echo"]') !== null`)
	b.setValue("#name", "from-form")
	b.setValue("#handler", "echo")
	b.setValue("#cron", "0 0 * * * *")
	b.setValue("#args", `{"n": "x"}`)
	b.click("#save")
	b.waitJS("the refusal inline", `(document.getElementById("form-error")?.textContent || "").includes("args.n")`)
	b.shot("schedule-refused")
	b.setValue("#args", `{"n": 7}`)
	b.click("#save")
	b.waitJS("the schedule's page", `document.querySelector("#task-handler code")?.textContent === "echo" && document.querySelector("#task-args code").textContent === '{"n":7}'`)
	b.shot("schedule-created")
	// On a phone, nothing makes a page scroll sideways.
	// Every page.
	b.phone("/schedule/new", "/schedule/edit?name=from-form", "/task?name=from-form", "/task?name=tick-mail", "/task?name=flaky",
		"/tasks", "/tasks?q=tick&show=running", "/", "/?window=1h", "/nodes", "/audit", "/calendars", "/alerts", "/forecast",
		"/reschedule?name=slow&cron=*/7+*+*+*+*+*", "/task?name=no-such-task")

	// The audit log: the trigger, the pause and the reschedule, by the
	// dashboard's (anonymous) user.
	b.open("/audit")
	b.waitJS("three actions", `["trigger", "pause", "reschedule"].every(a => document.querySelector('tr[data-action="' + a + '"] td.actor')?.textContent === "anonymous")`)
	b.shot("audit")

	// Nodes.
	b.open("/nodes")
	b.waitJS("three live rows", `document.querySelectorAll('tr[data-state="live"]').length === 3`)
	b.shot("nodes")

	// Kill the owner of "tick": it turns dead, its tasks move.
	victim := ownerOf(t, client, "tick")
	procs[victim.Name].kill()
	t.Logf("killed %s (node %d), owner of tick", victim.Name, victim.ID)
	b.open("/nodes")
	b.waitJS("the killed node dead", fmt.Sprintf(`document.querySelector('tr[data-node="%d"]').dataset.state === "dead"`, victim.ID))
	b.shot("nodes-dead")
	b.open("/tasks")
	b.waitJS("its tasks moved", fmt.Sprintf(
		`document.querySelector('tr[data-owner="%d"]') === null && document.querySelector('tr[data-task="tick"]').dataset.owner !== "0"`, victim.ID))
	b.shot("tasks-moved")
	b.open("/?window=1m")
	b.waitJS("the failover on the timeline", `document.querySelector("line.event.dead") !== null`)
	b.waitJS("no script ran", `window.pwned === undefined`)
	b.shot("timeline-failover")

	// The cost of one open dashboard: the overview refreshing by itself.
	b.open("/")
	const span = 20 * time.Second
	start, n0 := time.Now(), queries.Load()
	time.Sleep(span) // the page refreshes itself meanwhile
	b.waitJS("a live page", `document.getElementById("live-status").className === "ok"`)
	qps := float64(queries.Load()-n0) / time.Since(start).Seconds()
	t.Logf("one open overview: %.2f queries/s (refresh every %v)", qps, 2*time.Second)
	if qps > 5 {
		t.Errorf("one open dashboard costs %.2f queries/s, want at most 5", qps)
	}
}

// TestBrowserGroups drives the group switcher in headless Chromium: the
// all-groups overview lists the groups, the switcher opens and takes the
// browser to another group's page (the task list stays the task list),
// and neither the overview nor a group's page scrolls sideways on a
// 390 px phone. It skips without Chromium, except under CI=true.
func TestBrowserGroups(t *testing.T) {
	chromium := findChromium(t)
	f := newFixture(t, Options{AllGroups: true})
	f.addGroup("billing", "invoice", "dunning")
	f.addGroup("a-group-with-a-rather-long-name-for-a-phone-screen", "digest")

	b := newBrowser(t, chromium, f.srv.URL+"/ops")
	b.open("/groups")
	b.waitJS("three groups", `document.querySelectorAll("table.groups tr[data-group]").length === 3`)
	b.shot("groups")
	b.open("/tasks")
	b.click("#group-switch summary")
	b.waitJS("the switcher open", `document.getElementById("group-switch").open`)
	b.shot("group-switch")
	b.click(`#group-switch a[href$="/g/billing/tasks"]`)
	b.waitJS("billing's task list", `location.pathname === "/ops/g/billing/tasks" && document.querySelector('tr[data-task="invoice"]') !== null && document.querySelector('tr[data-task="orphan"]') === null`)
	b.waitJS("billing current", `document.querySelector("#group-switch summary b").textContent === "billing"`)
	b.phone("/groups", "/g/billing/tasks", "/g/a-group-with-a-rather-long-name-for-a-phone-screen/")
	// The switcher opened on a phone stays on the screen.
	b.run("phone screen", chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile))
	defer b.run("desktop screen", chromedp.EmulateReset())
	b.open("/groups")
	b.click("#group-switch summary")
	b.waitJS("the open switcher fits", `document.getElementById("group-switch").open && document.querySelector("#group-switch ul").getBoundingClientRect().right <= document.documentElement.clientWidth && document.documentElement.scrollWidth <= document.documentElement.clientWidth`)
	b.shot("phone-group-switch")
}

// findChromium returns the Chromium to drive; it skips the test when
// there is none, except in CI, where it fails.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EASYJOB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium on PATH (apt-get install -y chromium, or set EASYJOB_CHROMIUM): browser tests skipped"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// ownerOf returns the live node that holds task name's claim, waiting
// for one.
func ownerOf(t *testing.T, c *easyjob.Client, name string) easyjob.NodeInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ti, err := c.Task(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := c.Nodes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.ID == ti.NodeID && n.Live {
				return n
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no live node holds %q", name)
	return easyjob.NodeInfo{}
}

// browser is one headless Chromium tab on the dashboard at base.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // screenshots
}

// browserWait bounds every wait of the browser test: generous, for a
// loaded machine; a wait polls and returns as soon as it holds.
const browserWait = 30 * time.Second

func newBrowser(t *testing.T, chromium, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("start chromium: %v", err)
	}
	dir := os.Getenv("EASYJOB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "easyjob-artifacts")
	}
	dir = filepath.Join(dir, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return &browser{t: t, ctx: ctx, base: base, dir: dir}
}

// run runs steps with a deadline.
func (b *browser) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to path (under the mount point) and waits for the page.
func (b *browser) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("#live")))
}

// click clicks the first element matching sel. It clicks from the page's
// own JavaScript, in one step: the live part of the page may be redrawn
// between finding a node and clicking it. Callers wait for what the click
// leads to.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.waitJS(sel+" present", "document.querySelector("+strconv.Quote(sel)+") !== null")
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("(document.querySelector("+strconv.Quote(sel)+").click(), true)")); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
}

// phone opens each path on a phone-sized screen and checks that the page
// does not scroll sideways; the screen is a desktop's again after.
func (b *browser) phone(paths ...string) {
	b.t.Helper()
	b.run("phone screen", chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile))
	defer b.run("desktop screen", chromedp.EmulateReset())
	for i, p := range paths {
		b.open(p)
		b.waitJS("no sideways scroll on "+p, `document.documentElement.scrollWidth <= Math.min(window.innerWidth, document.documentElement.clientWidth)`)
		b.shot(fmt.Sprintf("phone-%d", i+1))
	}
}

// setValue replaces the value of the input matching sel.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	b.run("set "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

// waitJS polls the JavaScript expression cond until it is true.
func (b *browser) waitJS(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(browserWait)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		var ok bool
		ok, last = chromedp.Run(ctx, chromedp.Evaluate[bool]("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()"))
		cancel()
		if last == nil && ok {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	b.shot("failed-" + url.PathEscape(what))
	b.t.Fatalf("waiting for %s on %s: not within %v (last error %v)", what, loc, browserWait, last)
}

// shot saves a full-page screenshot as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s (%d bytes)", path, len(png))
}
