package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
)

// commandLine is one harness command: its flags, their check, its run.
type commandLine interface {
	flagSet() *flag.FlagSet
	// check validates the parsed flags and fills the defaults that depend
	// on others; an error is a usage error.
	check(fs *flag.FlagSet) error
	// run runs the command and prints its result.
	run(ctx context.Context) error
}

// newFlagSet returns the flag set of command name; -h prints usage, then
// the flags.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// errFailed is returned by a run that completed and printed a result that
// says it failed (chaos findings).
var errFailed = errors.New("failed")

// execute parses args into c and runs it. It returns the exit status: 2
// on a usage error, 1 when the run fails (errors other than errFailed are
// printed as "easyjob <name>: <error>"), else 0.
func execute(ctx context.Context, name string, c commandLine, args []string) int {
	fs := c.flagSet()
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := c.check(fs); err != nil {
		fmt.Fprintf(os.Stderr, "easyjob %s: %v\n", name, err)
		return 2
	}
	if err := c.run(ctx); err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintf(os.Stderr, "easyjob %s: %v\n", name, err)
		}
		return 1
	}
	return 0
}
