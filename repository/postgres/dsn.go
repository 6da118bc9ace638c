package postgres

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var kvDBName = regexp.MustCompile(`(?i)\bdbname\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)

// WithDatabase returns dsn pointing at database name instead, for URL
// (postgres://…/db) and key=value (dbname=…) DSNs. Tests and the bench
// harness use it to reach the fresh databases they create.
func WithDatabase(dsn, name string) (string, error) {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", RedactDSN(dsn), err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		if q := u.Query(); q.Has("dbname") {
			q.Set("dbname", name)
			u.RawQuery = q.Encode()
		}
		return u.String(), nil
	}
	if kvDBName.MatchString(dsn) {
		return kvDBName.ReplaceAllString(dsn, "dbname="+name), nil
	}
	return strings.TrimSpace(dsn + " dbname=" + name), nil
}
