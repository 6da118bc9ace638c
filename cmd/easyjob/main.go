package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" {
		// "easyjob --dsn X tasks": the command's flags may come first.
		args = commandFirst(args)
	}
	if len(args) < 1 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		usage(os.Stderr)
		os.Exit(2)
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		usage(os.Stderr)
		os.Exit(0)
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "easyjob: unknown command %q\n\n", name)
		usage(os.Stderr)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := c.run(ctx, args[1:])
	stop()
	os.Exit(code)
}

// usage lists the commands of the table that are not hidden, by name.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: easyjob <command> [flags]\n\ncommands:")
	var listed []command
	for _, c := range commands {
		if !c.hidden {
			listed = append(listed, c)
		}
	}
	slices.SortFunc(listed, func(a, b command) int { return strings.Compare(a.name, b.name) })
	for _, c := range listed {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.help)
	}
	fmt.Fprintln(w, "\nRun 'easyjob <command> -h' for the flags of a command.")
}
