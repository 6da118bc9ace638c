package main

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// lines (the driver reports each connection attempt) and the library's
// "easyjob: " prefix dropped.
func errorLine(err error, dsn string) string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(scrubSecret(err.Error(), dsn), "\n") {
		if l = oneLine(l); l != "" && !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	return strings.TrimPrefix(strings.Join(lines, " "), "easyjob: ")
}

// kvPassword matches the password of a key=value DSN.
var kvPassword = regexp.MustCompile(`(?i)\bpassword\s*=\s*('(?:[^'\\]|\\.)*'?|[^\s]*)`)

// scrubSecret hides the password of dsn (and the raw DSN itself) wherever
// it appears in msg: driver errors may quote either.
func scrubSecret(msg, dsn string) string {
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
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		secrets = append(secrets, strings.Trim(m[1], "'"))
	}
	for _, s := range secrets {
		if len(s) >= 3 { // shorter strings would mangle ordinary words
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return redactInline(msg)
}

// inlineURL matches a URL-style DSN inside a message.
var inlineURL = regexp.MustCompile(`postgres(?:ql)?://[^\s"'` + "`" + `]+`)

// redactInline redacts any other DSN-looking text with a password.
func redactInline(msg string) string {
	return inlineURL.ReplaceAllStringFunc(msg, postgres.RedactDSN)
}
