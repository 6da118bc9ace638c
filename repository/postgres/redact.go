package postgres

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces every secret RedactDSN hides.
const redacted = "xxxxx"

// kvPassword matches password=... in key=value DSNs: a quoted value (with
// \' and \\ escapes, as libpq reads them) or an unquoted run up to a space.
var kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s]*)`)

// RedactDSN returns dsn with its password hidden, for logs and errors. It
// handles the URL form (postgres://user:secret@host/db, and a password=
// query parameter) and the key=value form (password=secret). A DSN it
// cannot parse is still redacted textually rather than returned as is.
func RedactDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return kvPassword.ReplaceAllString(dsn, "${1}"+redacted)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return redactURLText(dsn)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", redacted)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactURLText hides the user info's password of a URL that net/url
// rejects (typically an unescaped character in the password): everything
// between the first ':' after the scheme and the last '@' before the path.
func redactURLText(dsn string) string {
	i := strings.Index(dsn, "://") + len("://")
	rest := dsn[i:]
	at := strings.LastIndex(rest, "@")
	if at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			rest = rest[:colon+1] + redacted + rest[at:]
		}
	}
	return kvPassword.ReplaceAllString(dsn[:i]+rest, "${1}"+redacted)
}
