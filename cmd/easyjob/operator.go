package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/easyjob-go/easyjob/cmd/easyjob/internal/dsn"
	"github.com/easyjob-go/easyjob/easyjob"
)

// action runs an operator command on its open env with its positional
// arguments.
type action func(ctx context.Context, e *env, args []string) error

// operation is an operator command: it connects to the database of --dsn
// and acts on the tasks and nodes of --group.
type operation struct {
	name, help string // set by operator from the command table
	args       string // synopsis of the positional arguments
	// minArgs and maxArgs bound the positional arguments (maxArgs < 0: any).
	minArgs, maxArgs int
	// flags registers the command's own flags and returns its action,
	// which closes over what it registered.
	flags func(fs *flag.FlagSet) action
	// liveness adds --live-after and --dead-after (commands that judge nodes).
	liveness bool
	// raw commands get the store but no schema check and no client (migrate).
	raw bool
	// groupless commands read every group: no --group, no client (groups).
	groupless bool
}

// operator makes the command table entry of an operator command.
func operator(name, help string, op operation) command {
	op.name, op.help = name, help
	return command{name: name, help: help, run: func(ctx context.Context, args []string) int {
		return op.run(ctx, args, os.Stdout, os.Stderr)
	}}
}

// run parses the flags of op, connects, runs it and maps its error to an
// exit status. Every failure prints exactly one line to stderr.
func (op operation) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(op.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The default is resolved after parsing so -h never prints a password
	// taken from EASYJOB_DSN.
	server := fs.String("dsn", "", "PostgreSQL DSN, e.g. postgres://user@host:5432/db (default $EASYJOB_DSN; one of the two is required)")
	group := new(string)
	if !op.groupless {
		group = fs.String("group", "", "task group (default: the database's only group; required when it holds several)")
	}
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	actor := fs.String("actor", "", "who the audit log records for the command's actions (default $"+envActor+", else the OS user)")
	var liveAfter, deadAfter *time.Duration
	if op.liveness {
		liveAfter = fs.Duration("live-after", 0, "a node is live while its heartbeat is this recent (default 2s, the library's)")
		deadAfter = fs.Duration("dead-after", 0, "a node silent this long is dead (default 3s, the library's)")
	}
	run := op.flags(fs)

	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "easyjob %s: %s\n", op.name, errorLine(err, *server))
		return code
	}
	pos, err := parseArgs(fs, args)
	if *server == "" {
		*server = dsn.Env()
	}
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage: easyjob %s [flags] %s\n\n%s.\n\nflags:\n", op.name, op.args, op.help)
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nexit status: 0 ok, 1 failed, 2 usage, 3 unknown task, 4 invalid input, 5 task in use (remove), 6 refused (trigger, update), 7 name taken (create)\n")
		return exitOK
	}
	if err != nil {
		return fail(exitUsage, fmt.Errorf("%w (see 'easyjob %s -h')", err, op.name))
	}
	if len(pos) < op.minArgs || (op.maxArgs >= 0 && len(pos) > op.maxArgs) {
		what := "no arguments"
		if op.args != "" {
			what = op.args
		}
		return fail(exitUsage, fmt.Errorf("want %s, got %d argument(s) (see 'easyjob %s -h')", what, len(pos), op.name))
	}
	if *group == "" && isSet(fs, "group") {
		return fail(exitUsage, errors.New("--group must not be empty"))
	}
	// Every command gets the actor, set once here, so no action of any
	// command can reach the Client unattributed.
	a, err := cliActor(*actor, isSet(fs, "actor"), os.Getenv, osUserName)
	if err != nil {
		return fail(exitUsage, err)
	}
	ctx = easyjob.WithActor(ctx, a)
	if *server == "" {
		// No silent default: a guessed local server would answer "not
		// migrated" about a database nobody meant.
		return fail(exitUsage, errors.New("no database given: pass --dsn postgres://user@host:5432/db or set EASYJOB_DSN"))
	}
	// --follow without --timeout follows until the run ends.
	if *timeout > 0 && (!isSet(fs, "follow") || isSet(fs, "timeout")) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	e := &env{out: stdout, notes: stderr, json: *asJSON, group: *group}
	if liveAfter != nil {
		e.liveAfter, e.deadAfter = *liveAfter, *deadAfter
	}
	if op.groupless {
		e.group = "default" // a client for the store's reads: every group is listed
	}
	if err := e.open(ctx, *server, op.raw); err != nil {
		return fail(exitCode(err), err)
	}
	defer e.close()
	if err := run(ctx, e, pos); err != nil {
		return fail(exitCode(err), err)
	}
	return exitOK
}

// isSet reports whether the command line gave the flag name (an explicit
// empty value included).
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
