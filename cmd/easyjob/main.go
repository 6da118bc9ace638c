// Command easyjob is the operator CLI of easy-job: the measurement harness
// (bench, chaos) and, later, operator commands (migrate, status, ...).
//
// Each subcommand is one entry of the commands table below: a function
// that parses its own flags (package flag) from args and returns the exit
// status. Adding a command is adding an entry (and a file).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: it parses args with its own flag.FlagSet and
// returns the process exit status.
type command struct {
	run    func(ctx context.Context, args []string) int
	usage  string
	hidden bool
}

// commands is the subcommand table.
var commands = map[string]command{
	"bench": {run: benchMain, usage: "measure fires/s, start lag, round trips, CPU and memory of N nodes"},
	"chaos": {run: chaosMain, usage: "kill, freeze and restart node processes; report failover, duplicates, lost fires"},
	"_node": {run: nodeMain, usage: "one node process (started by bench --procs and chaos)", hidden: true},
}

// defaultDSN is the server used when neither --dsn nor EASYJOB_DSN is set.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// envDSN returns EASYJOB_DSN, else defaultDSN.
func envDSN() string {
	if d := os.Getenv("EASYJOB_DSN"); d != "" {
		return d
	}
	return defaultDSN
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: easyjob <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name, c := range commands {
		if !c.hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", name, commands[name].usage)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'easyjob <command> -h' for the flags of a command.")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "-h" || name == "--help" || name == "help" {
		usage()
		os.Exit(0)
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "easyjob: unknown command %q\n\n", name)
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := c.run(ctx, os.Args[2:])
	stop()
	os.Exit(code)
}
