package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/easyjob-go/easyjob/easyjob"
)

// envActor names the operator when --actor is not given (e.g. set once
// per shell, or by a wrapper script that knows the real user behind sudo).
const envActor = "EASYJOB_ACTOR"

// maxActorLen bounds an actor name: the audit log is read by people, and
// a name that long is a mistake (a pasted file, a token).
const maxActorLen = 200

// cliActor is who the audit log records for the actions of this command:
// --actor if given (flagSet), else $EASYJOB_ACTOR, else the OS user; via
// "cli", from this host. getenv and osUser are os.Getenv and osUserName
// outside tests.
func cliActor(flagValue string, flagSet bool, getenv func(string) string, osUser func() string) (easyjob.Actor, error) {
	name, source := flagValue, "--actor"
	if !flagSet {
		name, source = getenv(envActor), envActor
		if name == "" {
			// The OS user is not validated: the system vouches for it, and
			// a refusal there would leave the operator no way to act but
			// --actor.
			name, source = osUser(), ""
		}
	}
	if source != "" {
		if err := checkActor(name); err != nil {
			return easyjob.Actor{}, usagef("invalid %s %q: %w", source, name, err)
		}
	}
	host, _ := os.Hostname() // unknown host: the entry just has no origin
	return easyjob.Actor{Name: strings.TrimSpace(name), Via: "cli", From: host}, nil
}

// checkActor refuses names that would garble the audit log's tables and
// terminals (control characters, invalid UTF-8) or record no one.
func checkActor(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("an actor name must not be empty")
	case !utf8.ValidString(name):
		return errors.New("an actor name must be valid UTF-8")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("an actor name must not contain control characters (newlines, tabs, escapes)")
	case utf8.RuneCountInString(name) > maxActorLen:
		return fmt.Errorf("an actor name must be at most %d characters", maxActorLen)
	}
	return nil
}

// osUserName is the OS user running the CLI: the account name, else
// $USER, else "unknown".
func osUserName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return "unknown"
}
