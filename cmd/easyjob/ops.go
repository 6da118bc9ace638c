package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/repository"
	"github.com/easyjob-go/easyjob/repository/postgres"
)

// Exit statuses of the operator commands; scripts may rely on them.
const (
	opExitOK       = 0 // done
	opExitFailed   = 1 // the operation failed (database unreachable, not migrated, ...)
	opExitUsage    = 2 // bad flags or arguments
	opExitNotFound = 3 // unknown task
	opExitInvalid  = 4 // invalid input (a cron expression)
)

func init() {
	for _, op := range operatorCommands {
		commands[op.name] = command{
			run:   func(ctx context.Context, args []string) int { return runOp(ctx, op, args, os.Stdout, os.Stderr) },
			usage: op.summary,
		}
	}
}

// opSpec is one operator subcommand.
type opSpec struct {
	name    string
	args    string // synopsis of the positional arguments
	summary string
	// minArgs and maxArgs bound the positional arguments (maxArgs < 0: any).
	minArgs, maxArgs int
	// flags adds the command's own flags; it returns nothing, the command
	// closes over what it registered.
	flags func(fs *flag.FlagSet) func(ctx context.Context, e *opEnv, args []string) error
	// raw commands get the store but no schema check and no client (migrate).
	raw bool
}

// opEnv is what a command runs with.
type opEnv struct {
	out    io.Writer
	json   bool
	group  string
	store  *postgres.Store
	client *easyjob.Client
	// liveAfter and deadAfter judge node rows (0: the library defaults).
	liveAfter, deadAfter time.Duration
}

// opUsageError is wrong input on the command line: exit status 2.
type opUsageError struct{ msg string }

func (e opUsageError) Error() string { return e.msg }

func opUsagef(format string, a ...any) error { return opUsageError{fmt.Sprintf(format, a...)} }

var operatorCommands = []opSpec{
	{
		name: "migrate", args: "up|down|status", summary: "apply, revert or show the database schema",
		minArgs: 1, maxArgs: 1, raw: true, flags: opMigrateFlags,
	},
	{
		name: "status", summary: "show the nodes and tasks of a group",
		flags: func(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
			return func(ctx context.Context, e *opEnv, _ []string) error { return opStatus(ctx, e, true, true) }
		},
	},
	{
		name: "tasks", summary: "list the tasks of a group",
		flags: func(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
			return func(ctx context.Context, e *opEnv, _ []string) error { return opStatus(ctx, e, false, true) }
		},
	},
	{
		name: "nodes", summary: "list the nodes of a group (live, suspect, dead)",
		flags: func(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
			return func(ctx context.Context, e *opEnv, _ []string) error { return opStatus(ctx, e, true, false) }
		},
	},
	{
		name: "history", args: "NAME", summary: "list the runs of a task, newest first",
		minArgs: 1, maxArgs: 1, flags: opHistoryFlags,
	},
	{
		name: "trigger", args: "NAME", summary: "run a task once as soon as possible",
		minArgs: 1, maxArgs: 1, flags: opControlFlags("trigger"),
	},
	{
		name: "pause", args: "NAME", summary: "stop the fires of a task (a running fire completes)",
		minArgs: 1, maxArgs: 1, flags: opControlFlags("pause"),
	},
	{
		name: "resume", args: "NAME", summary: "let a paused task fire again",
		minArgs: 1, maxArgs: 1, flags: opControlFlags("resume"),
	},
	{
		name: "reschedule", args: "NAME CRON", summary: "give a task a new cron expression",
		minArgs: 2, maxArgs: -1, flags: opControlFlags("reschedule"),
	},
}

// runOp parses the flags of op, connects, runs it and maps its error to
// an exit status. Every failure prints exactly one line to stderr.
func runOp(ctx context.Context, op opSpec, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(op.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The default is resolved after parsing so -h never prints a password
	// taken from EASYJOB_DSN.
	dsn := fs.String("dsn", "", "PostgreSQL DSN (default $EASYJOB_DSN, else "+defaultDSN+")")
	group := fs.String("group", "default", "task group")
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	var liveAfter, deadAfter *time.Duration
	if op.name == "status" || op.name == "nodes" {
		liveAfter = fs.Duration("live-after", 0, "a node is live while its heartbeat is this recent (default 2s, the library's)")
		deadAfter = fs.Duration("dead-after", 0, "a node silent this long is dead (default 3s, the library's)")
	}
	run := op.flags(fs)

	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "easyjob %s: %s\n", op.name, opErrorLine(err, *dsn))
		return code
	}
	pos, err := opParseArgs(fs, args)
	if *dsn == "" {
		*dsn = envDSN()
	}
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage: easyjob %s [flags] %s\n\n%s.\n\nflags:\n", op.name, op.args, op.summary)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nexit status: 0 ok, 1 failed, 2 usage, 3 unknown task, 4 invalid input\n")
		return opExitOK
	}
	if err != nil {
		return fail(opExitUsage, fmt.Errorf("%v (see 'easyjob %s -h')", err, op.name))
	}
	if len(pos) < op.minArgs || (op.maxArgs >= 0 && len(pos) > op.maxArgs) {
		what := "no arguments"
		if op.args != "" {
			what = op.args
		}
		return fail(opExitUsage, fmt.Errorf("want %s, got %d argument(s) (see 'easyjob %s -h')", what, len(pos), op.name))
	}
	if *group == "" {
		return fail(opExitUsage, errors.New("--group must not be empty"))
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	e := &opEnv{out: stdout, json: *asJSON, group: *group}
	if liveAfter != nil {
		e.liveAfter, e.deadAfter = *liveAfter, *deadAfter
	}
	if err := e.open(ctx, *dsn, op.raw); err != nil {
		return fail(opExitCode(err), err)
	}
	defer e.close()
	if err := run(ctx, e, pos); err != nil {
		return fail(opExitCode(err), err)
	}
	return opExitOK
}

// opErrorLine renders err as one line: secrets of dsn hidden, repeated
// lines (the driver reports each connection attempt) and the library's
// "easyjob: " prefix dropped.
func opErrorLine(err error, dsn string) string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(opScrubSecret(err.Error(), dsn), "\n") {
		if l = opOneLine(l); l != "" && !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	return strings.TrimPrefix(strings.Join(lines, " "), "easyjob: ")
}

// opExitCode maps an error to the documented exit statuses.
func opExitCode(err error) int {
	var u opUsageError
	switch {
	case err == nil:
		return opExitOK
	case errors.As(err, &u):
		return opExitUsage
	case errors.Is(err, easyjob.ErrTaskNotFound):
		return opExitNotFound
	case errors.Is(err, easyjob.ErrInvalidCron):
		return opExitInvalid
	case errors.Is(err, easyjob.ErrInvalidConfig), errors.Is(err, easyjob.ErrInvalidOption):
		return opExitUsage
	}
	return opExitFailed
}

// open connects to the database; unless raw it checks the schema and
// makes a client of the group.
func (e *opEnv) open(ctx context.Context, dsn string, raw bool) error {
	s, err := postgres.Open(ctx, dsn)
	var parseErr *pgconn.ParseConfigError
	if errors.As(err, &parseErr) {
		return opUsagef("invalid --dsn: %v", parseErr)
	}
	if err != nil {
		return fmt.Errorf("cannot reach the database %s: %w", postgres.RedactDSN(dsn), opUnwrapConnect(err))
	}
	e.store = s
	if raw {
		return nil
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		e.close()
		return err
	}
	if v == 0 {
		e.close()
		return fmt.Errorf("the database %s has no easyjob schema: run 'easyjob migrate up'", postgres.RedactDSN(dsn))
	}
	c, err := easyjob.NewClient(ctx, easyjob.Config{
		Store: s, Group: e.group, LiveAfter: e.liveAfter, DeadAfter: e.deadAfter,
		HeartbeatInterval: opHeartbeatFor(e.liveAfter),
	})
	if err != nil {
		e.close()
		return err
	}
	e.client = c
	return nil
}

// opHeartbeatFor keeps a custom --live-after valid (LiveAfter must be at
// least one heartbeat): 0 leaves the default.
func opHeartbeatFor(liveAfter time.Duration) time.Duration {
	if liveAfter > 0 && liveAfter < time.Second {
		return liveAfter
	}
	return 0
}

func (e *opEnv) close() {
	if e.client != nil {
		_ = e.client.Close()
	}
	if e.store != nil {
		_ = e.store.Close()
	}
}

// opUnwrapConnect drops the store's own "connect <dsn>:" prefix; open
// prints the (redacted) DSN once itself.
func opUnwrapConnect(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// emit prints v as indented JSON.
func (e *opEnv) emit(v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ---- migrate ----

func opMigrateFlags(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
	steps := fs.Int("steps", 1, "migrate down: how many migrations to revert")
	yes := fs.Bool("yes", false, "migrate down: confirm dropping tables (and the history in them)")
	return func(ctx context.Context, e *opEnv, args []string) error {
		switch args[0] {
		case "up":
			if err := e.store.Migrate(ctx); err != nil {
				return err
			}
		case "down":
			if *steps < 1 {
				return opUsagef("--steps must be at least 1 (got %d)", *steps)
			}
			if !*yes {
				return opUsagef("migrate down drops tables and their data: pass --yes to confirm")
			}
			if err := e.store.MigrateDown(ctx, *steps); err != nil {
				return err
			}
		case "status":
		default:
			return opUsagef("unknown migrate action %q: want up, down or status", args[0])
		}
		v, err := e.store.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		latest := postgres.LatestSchemaVersion()
		state := "up to date"
		switch {
		case v == 0:
			state = "not migrated"
		case v < latest:
			state = fmt.Sprintf("%d migration(s) pending", latest-v)
		case v > latest:
			state = "newer than this binary"
		}
		if e.json {
			return e.emit(struct {
				Version int    `json:"version"`
				Latest  int    `json:"latest"`
				State   string `json:"state"`
			}{v, latest, state})
		}
		_, err = fmt.Fprintf(e.out, "schema version %d, latest %d: %s\n", v, latest, state)
		return err
	}
}

// ---- status, tasks, nodes ----

func opStatus(ctx context.Context, e *opEnv, withNodes, withTasks bool) error {
	now, err := e.client.Now(ctx)
	if err != nil {
		return err
	}
	var nodes []easyjob.NodeInfo
	var tasks []easyjob.TaskInfo
	if withNodes {
		if nodes, err = e.client.Nodes(ctx); err != nil {
			return err
		}
	}
	if withTasks {
		if tasks, err = e.client.Tasks(ctx); err != nil {
			return err
		}
	}
	if e.json {
		switch {
		case withNodes && withTasks:
			return e.emit(struct {
				Group string             `json:"group"`
				Now   time.Time          `json:"now"`
				Nodes []easyjob.NodeInfo `json:"nodes"`
				Tasks []easyjob.TaskInfo `json:"tasks"`
			}{e.group, now, opNonNil(nodes), opNonNil(tasks)})
		case withNodes:
			return e.emit(opNonNil(nodes))
		default:
			return e.emit(opNonNil(tasks))
		}
	}
	if withNodes && withTasks {
		live := 0
		for _, n := range nodes {
			if n.Live {
				live++
			}
		}
		fmt.Fprintf(e.out, "group %s: %d node(s), %d live; %d task(s); database time %s\n\n",
			e.group, len(nodes), live, len(tasks), now.Format(time.RFC3339))
	}
	if withNodes {
		if withTasks {
			fmt.Fprintln(e.out, "NODES")
		}
		opPrintNodes(e.out, nodes, now, e.group)
	}
	if withNodes && withTasks {
		fmt.Fprintln(e.out, "\nTASKS")
	}
	if withTasks {
		opPrintTasks(e.out, tasks, now, e.group)
	}
	return nil
}

func opNonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func opPrintNodes(out io.Writer, nodes []easyjob.NodeInfo, now time.Time, group string) {
	if len(nodes) == 0 {
		fmt.Fprintf(out, "no nodes in group %q\n", group)
		return
	}
	t := newOpTable(out, "ID", "NAME", "STATE", "ROW", "HEARTBEAT", "STARTED", "WEIGHT", "RUNS", "IN-FLIGHT")
	for _, n := range nodes {
		state := "suspect"
		switch {
		case n.Live:
			state = "live"
		case n.Dead:
			state = "dead"
		}
		row := "-"
		if n.RowNumber > 0 {
			row = strconv.Itoa(n.RowNumber)
		}
		t.row(strconv.FormatInt(n.ID, 10), n.Name, state, row, opShortDuration(n.HeartbeatAge)+" ago", opRelTime(n.StartedAt, now),
			strconv.Itoa(n.Weight), strconv.FormatInt(n.Counts, 10), strconv.Itoa(n.InFlight))
	}
	t.flush()
}

func opPrintTasks(out io.Writer, tasks []easyjob.TaskInfo, now time.Time, group string) {
	if len(tasks) == 0 {
		fmt.Fprintf(out, "no tasks in group %q\n", group)
		return
	}
	t := newOpTable(out, "ID", "NAME", "PARENT", "CRON", "STATUS", "NEXT", "NODE", "LAST", "FINISHED", "ERROR")
	for _, x := range tasks {
		cron := x.Cron
		if cron == "" {
			cron = "(after parent)"
		}
		if x.Timezone != "" {
			cron += " " + x.Timezone
		}
		status := string(x.Status)
		if x.Status == repository.TaskDoing && x.Paused {
			status += " (pausing)"
		}
		if x.TriggerRequested {
			status += " (+1 triggered)"
		}
		next := opRelTime(x.NextStartTime, now)
		if x.Status == repository.TaskFinished || (x.Parent != "" && x.Cron == "") {
			next = "-"
		}
		node := ""
		if x.NodeID != 0 {
			node = strconv.FormatInt(x.NodeID, 10)
		}
		t.row(strconv.FormatInt(x.ID, 10), x.Name, x.Parent, cron, status, next, node,
			string(x.LastStatus), opRelTime(x.LastFinishedAt, now), opTruncate(opOneLine(x.LastError), 40))
	}
	t.flush()
}

// ---- history ----

func opHistoryFlags(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
	limit := fs.Int("limit", 20, "how many runs to show (at most 1000)")
	before := fs.Int64("before", 0, "show runs with an id below this (the next page)")
	status := fs.String("status", "", "only runs with this status: running, succeeded, failed, timed_out, abandoned, fenced, skipped")
	return func(ctx context.Context, e *opEnv, args []string) error {
		if *limit < 1 || *limit > 1000 {
			return opUsagef("--limit must be between 1 and 1000 (got %d)", *limit)
		}
		if *before < 0 {
			return opUsagef("--before must be a run id (got %d)", *before)
		}
		f := easyjob.HistoryFilter{Limit: *limit, BeforeID: *before}
		if *status != "" {
			st, err := repository.ParseExecStatus(*status)
			if err != nil {
				return opUsagef("--status %q: want running, succeeded, failed, timed_out, abandoned, fenced or skipped", *status)
			}
			f.Status = st
		}
		runs, err := e.client.History(ctx, args[0], f)
		if err != nil {
			return err
		}
		if e.json {
			return e.emit(opNonNil(runs))
		}
		now, err := e.client.Now(ctx)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			fmt.Fprintf(e.out, "no runs of %q\n", args[0])
			return nil
		}
		t := newOpTable(e.out, "ID", "STATUS", "SCHEDULED", "STARTED", "TOOK", "NODE", "ATTEMPT", "ERROR")
		for _, r := range runs {
			took := "-"
			if r.Status == repository.ExecRunning {
				took = "running " + opShortDuration(now.Sub(r.StartedAt))
			} else if !r.FinishedAt.IsZero() {
				took = opShortDuration(r.Duration())
			}
			t.row(strconv.FormatInt(r.ID, 10), string(r.Status), r.ScheduledAt.Format("2006-01-02 15:04:05.000"),
				opRelTime(r.StartedAt, now), took, strconv.FormatInt(r.NodeID, 10), strconv.Itoa(r.Attempt),
				opTruncate(opOneLine(r.Error), 60))
		}
		t.flush()
		if len(runs) == *limit {
			fmt.Fprintf(e.out, "more: --before %d\n", runs[len(runs)-1].ID)
		}
		return nil
	}
}

// ---- trigger, pause, resume, reschedule ----

func opControlFlags(op string) func(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
	return func(fs *flag.FlagSet) func(context.Context, *opEnv, []string) error {
		return func(ctx context.Context, e *opEnv, args []string) error {
			name := args[0]
			var t easyjob.TaskInfo
			var err error
			switch op {
			case "trigger":
				t, err = e.client.Trigger(ctx, name)
			case "pause":
				t, err = e.client.Pause(ctx, name)
			case "resume":
				t, err = e.client.Resume(ctx, name)
			case "reschedule":
				// The cron may come quoted or as separate fields.
				t, err = e.client.Reschedule(ctx, name, strings.Join(args[1:], " "))
			}
			if err != nil {
				return err
			}
			if e.json {
				return e.emit(t)
			}
			now, err := e.client.Now(ctx)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.out, opDescribe(op, t, now))
			return err
		}
	}
}

// opDescribe says in one line what an operator action did.
func opDescribe(op string, t easyjob.TaskInfo, now time.Time) string {
	next := opRelTime(t.NextStartTime, now)
	switch op {
	case "trigger":
		switch {
		case t.TriggerRequested:
			return fmt.Sprintf("triggered %q: a fire is running on node %d; it runs once more right after it", t.Name, t.NodeID)
		case t.Paused:
			return fmt.Sprintf("triggered %q: runs once %s, then stays paused", t.Name, next)
		default:
			return fmt.Sprintf("triggered %q: runs %s", t.Name, next)
		}
	case "pause":
		if t.Status == repository.TaskDoing {
			return fmt.Sprintf("paused %q: the fire on node %d completes, then the task stays paused", t.Name, t.NodeID)
		}
		return fmt.Sprintf("paused %q", t.Name)
	case "resume":
		if t.Status == repository.TaskDoing {
			return fmt.Sprintf("resumed %q: a fire is running on node %d", t.Name, t.NodeID)
		}
		if t.Status == repository.TaskFinished {
			return fmt.Sprintf("resumed %q: it has no further fire time", t.Name)
		}
		return fmt.Sprintf("resumed %q: next fire %s", t.Name, next)
	case "reschedule":
		msg := fmt.Sprintf("rescheduled %q to %q: next fire %s (%s)", t.Name, t.Cron, next, t.NextStartTime.Format(time.RFC3339))
		if t.Status == repository.TaskDoing {
			msg += fmt.Sprintf("; the fire claimed by node %d runs first", t.NodeID)
		}
		if t.Paused {
			msg += "; the task is paused"
		}
		return msg
	}
	return t.Name
}

// ---- arguments and secrets ----

// opParseArgs parses flags anywhere among the positional arguments
// ("history NAME --limit 5"); everything after "--" is positional.
func opParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

var opKVPassword = regexp.MustCompile(`(?i)\bpassword\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s]*)`)

// opScrubSecret hides the password of dsn (and the raw DSN itself) wherever
// it appears in msg: driver errors may quote either.
func opScrubSecret(msg, dsn string) string {
	if dsn == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, dsn, postgres.RedactDSN(dsn))
	var secrets []string
	if u, err := url.Parse(dsn); err == nil && strings.Contains(dsn, "://") {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
		if p := u.Query().Get("password"); p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
	}
	for _, m := range opKVPassword.FindAllStringSubmatch(dsn, -1) {
		secrets = append(secrets, strings.Trim(m[1], "'"))
	}
	for _, s := range secrets {
		if len(s) >= 3 { // shorter strings would mangle ordinary words
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return opRedactInline(msg)
}

// opRedactInline redacts any other DSN-looking text with a password.
var opInlineURL = regexp.MustCompile(`postgres(?:ql)?://[^\s"'` + "`" + `]+`)

func opRedactInline(msg string) string {
	return opInlineURL.ReplaceAllStringFunc(msg, postgres.RedactDSN)
}
