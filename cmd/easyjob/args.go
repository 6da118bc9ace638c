package main

import (
	"flag"
	"strings"
)

// parseArgs parses flags anywhere among the positional arguments
// ("history NAME --limit 5"); everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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

// boolFlags are the flags of any command that take no value: the others
// consume the next argument unless written --name=value.
var boolFlags = map[string]bool{
	"json": true, "yes": true, "force": true, "drop-history": true, "reset": true, "h": true, "help": true,
	"paused": true, "allow-unknown": true, "skip-interrupted": true, "every-from-creation": true,
}

// commandFirst moves flags given before the command ("--dsn X tasks")
// after it ("tasks --dsn X"), where the command parses them. Arguments
// that start with the command are returned as they are.
func commandFirst(args []string) []string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		name := strings.TrimLeft(args[i], "-")
		if strings.Contains(name, "=") || boolFlags[name] {
			i++
		} else {
			i += 2
		}
	}
	if i == 0 || i >= len(args) {
		return args
	}
	out := make([]string, 0, len(args))
	out = append(out, args[i])
	out = append(out, args[:i]...)
	return append(out, args[i+1:]...)
}
