package harness

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/easyjob-go/easyjob/repository/postgres"
)

// redactedSecret replaces a password in what the harness prints, as
// postgres.RedactDSN does.
const redactedSecret = "xxxxx"

// libpqKeys are the connection keywords libpq knows: a DSN is written for
// pgx, which takes any other key as a server setting, where libpq (pgbench)
// rejects it.
var libpqKeys = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true, "passfile": true,
	"channel_binding": true, "connect_timeout": true, "client_encoding": true, "options": true,
	"application_name": true, "fallback_application_name": true, "keepalives": true, "keepalives_idle": true,
	"keepalives_interval": true, "keepalives_count": true, "tcp_user_timeout": true, "replication": true,
	"gssencmode": true, "sslmode": true, "requiressl": true, "sslcompression": true, "sslcert": true, "sslkey": true,
	"sslpassword": true, "sslcertmode": true, "sslrootcert": true, "sslcrl": true, "sslcrldir": true, "sslsni": true,
	"requirepeer": true, "ssl_min_protocol_version": true, "ssl_max_protocol_version": true, "krbsrvname": true,
	"gsslib": true, "gssdelegation": true, "service": true, "target_session_attrs": true, "load_balance_hosts": true,
	"require_auth": true, "sslnegotiation": true,
}

// pgxOnlyKeys configure pgx or its pool, not the session: dropped.
var pgxOnlyKeys = []string{"statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode",
	"min_read_buffer_size", "servicefile", "pool_"}

// splitPassword turns dsn (pgx's URL or key=value form) into a libpq
// conninfo without its password, and the password ("" if none): the
// conninfo goes on pgbench's command line, which any user of the machine
// can read, the password in its environment. Keys only pgx knows are
// dropped; other unknown keys, server settings for pgx, become -c options
// as libpq needs them.
func splitPassword(dsn string) (conninfo, password string, err error) {
	if strings.Contains(dsn, "://") {
		return splitURLPassword(dsn)
	}
	pairs, err := parseConninfo(dsn)
	if err != nil {
		return "", "", fmt.Errorf("DSN %s: %w", postgres.RedactDSN(dsn), err)
	}
	pairs, password = libpqPairs(pairs)
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p[0] + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(p[1]) + "'")
	}
	return b.String(), password, nil
}

// splitURLPassword is splitPassword of a postgres:// URL.
func splitURLPassword(dsn string) (string, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", fmt.Errorf("DSN %s: cannot parse it for pgbench", postgres.RedactDSN(dsn))
	}
	var password string
	if u.User != nil {
		password, _ = u.User.Password()
		u.User = url.User(u.User.Username())
	}
	var pairs [][2]string
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, kerr := url.QueryUnescape(k)
		v, verr := url.QueryUnescape(v)
		if kerr != nil || verr != nil {
			return "", "", fmt.Errorf("DSN %s: bad query parameter", postgres.RedactDSN(dsn))
		}
		pairs = append(pairs, [2]string{k, v})
	}
	pairs, qpassword := libpqPairs(pairs)
	if qpassword != "" {
		password = qpassword // libpq reads the query after the user info
	}
	q := make([]string, len(pairs))
	for i, p := range pairs {
		q[i] = url.QueryEscape(p[0]) + "=" + url.QueryEscape(p[1])
	}
	u.RawQuery = strings.Join(q, "&")
	return u.String(), password, nil
}

// libpqPairs returns pairs without the password (returned apart) and pgx's
// own keys, the keys libpq does not know folded into options as -c
// key=value.
func libpqPairs(pairs [][2]string) (out [][2]string, password string) {
	var settings []string
	optionsAt := -1
	for _, p := range pairs {
		k := p[0]
		switch {
		case k == "password":
			password = p[1]
		case pgxOnly(k):
		case k == "options":
			if optionsAt < 0 {
				optionsAt = len(out)
				out = append(out, p)
			} else {
				out[optionsAt][1] = p[1] // the last one counts, as in libpq
			}
		case libpqKeys[k]:
			out = append(out, p)
		default:
			settings = append(settings, "-c "+escapeOption(k+"="+p[1]))
		}
	}
	if len(settings) > 0 {
		if optionsAt < 0 {
			out = append(out, [2]string{"options", ""})
			optionsAt = len(out) - 1
		}
		out[optionsAt][1] = strings.TrimSpace(out[optionsAt][1] + " " + strings.Join(settings, " "))
	}
	return out, password
}

func pgxOnly(k string) bool {
	for _, p := range pgxOnlyKeys {
		if k == p || strings.HasSuffix(p, "_") && strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// escapeOption escapes the spaces and backslashes of one word of libpq's
// options.
func escapeOption(s string) string {
	return strings.NewReplacer(`\`, `\\`, " ", `\ `).Replace(s)
}

// parseConninfo splits a key=value DSN as libpq does: values are single
// quoted or run to the next space, a backslash escapes the next character.
func parseConninfo(s string) ([][2]string, error) {
	var pairs [][2]string
	i := 0
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	for {
		skip()
		if i == len(s) {
			return pairs, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		skip()
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, errors.New("malformed key=value DSN") // no text of it: it may be part of a password
		}
		i++
		skip()
		var v strings.Builder
		quoted := i < len(s) && s[i] == '\''
		if quoted {
			i++
		}
		closed := false
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				v.WriteByte(s[i+1])
				i += 2
				continue
			}
			if quoted && c == '\'' {
				i++
				closed = true
				break
			}
			if !quoted && isSpace(c) {
				break
			}
			v.WriteByte(c)
			i++
		}
		if quoted && !closed {
			return nil, errors.New("unterminated quoted value")
		}
		pairs = append(pairs, [2]string{key, v.String()})
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
