package dashboard

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// Role is what a user of Users may do.
type Role string

// The roles: a viewer reads every page and the API's reads; an operator
// also acts (trigger, pause, resume, reschedule, the schedule forms, the
// API's writes).
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
)

// Users is a list of users who sign in with HTTP basic auth, each a
// viewer or an operator: the authentication of the standalone `easyjob
// dashboard`, and one an embedder may use (Wrap the handler, pass CanAct
// as Options.CanAct). The audit log records a user's actions under the
// user's name (the default Options.Actor). Safe for concurrent use.
type Users struct {
	byName map[string]*account
	// verified caches the SHA-256 of a password bcrypt accepted, by user,
	// so that a page refreshing every 2 s does not cost a bcrypt
	// comparison each time.
	mu       sync.Mutex
	verified map[string][sha256.Size]byte
}

type account struct {
	role   Role
	bcrypt []byte            // from a users file
	plain  [sha256.Size]byte // AddPassword's, hashed
}

// dummyHash is compared with when the user is unknown, so that an unknown
// name takes the time a wrong password does.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("easyjob"), bcrypt.MinCost)

// NewUsers returns an empty list (AddPassword adds to it).
func NewUsers() *Users {
	return &Users{byName: map[string]*account{}, verified: map[string][sha256.Size]byte{}}
}

// ParseUsers reads a users file: one user a line, "name:role:hash", role
// viewer or operator, hash a bcrypt hash of the password ($2a$, $2b$ or
// $2y$, e.g. from `htpasswd -nbB name password`, the part after its
// colon); blank lines and lines starting with # are skipped. A name may
// not contain a colon or appear twice.
func ParseUsers(r io.Reader) (*Users, error) {
	u := NewUsers()
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok1 := strings.Cut(line, ":")
		role, hash, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("users line %d: want name:role:bcrypt-hash", n)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("users line %d: the hash of %q is not a bcrypt hash: %w", n, name, err)
		}
		if err := u.add(name, Role(role), &account{role: Role(role), bcrypt: []byte(hash)}); err != nil {
			return nil, fmt.Errorf("users line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	return u, nil
}

// AddPassword adds a user whose password is given in clear (e.g. from the
// environment); it is kept hashed and compared in constant time.
func (u *Users) AddPassword(name string, role Role, password string) error {
	if password == "" {
		return fmt.Errorf("user %q: empty password", name)
	}
	return u.add(name, role, &account{role: role, plain: sha256.Sum256([]byte(password))})
}

func (u *Users) add(name string, role Role, a *account) error {
	switch {
	case name == "" || strings.ContainsAny(name, ":\r\n\t"):
		return fmt.Errorf("invalid user name %q: want a non-empty name without colons or control characters", name)
	case role != RoleViewer && role != RoleOperator:
		return fmt.Errorf("user %q: role %q: want %s or %s", name, role, RoleViewer, RoleOperator)
	case u.byName[name] != nil:
		return fmt.Errorf("user %q is listed twice", name)
	}
	u.byName[name] = a
	return nil
}

// Len is the number of users.
func (u *Users) Len() int { return len(u.byName) }

// Operators is the number of users who may act.
func (u *Users) Operators() int {
	n := 0
	for _, a := range u.byName {
		if a.role == RoleOperator {
			n++
		}
	}
	return n
}

type userKey struct{}

// UserOf returns the user Users.Wrap authenticated for r.
func UserOf(r *http.Request) (name string, role Role, ok bool) {
	v, ok := r.Context().Value(userKey{}).([2]string)
	return v[0], Role(v[1]), ok
}

// Wrap makes every request to h authenticate as one of the users with
// HTTP basic auth; others get 401 Unauthorized.
func (u *Users) Wrap(h http.Handler, realm string) http.Handler {
	challenge := "Basic realm=" + strconv.Quote(realm) + ", charset=\"UTF-8\""
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, password, ok := r.BasicAuth()
		role, err := u.check(name, password)
		if !ok || err != nil {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, [2]string{name, string(role)})))
	})
}

var errDenied = errors.New("unknown user or wrong password")

// check returns the role of name when password is theirs.
func (u *Users) check(name, password string) (Role, error) {
	sum := sha256.Sum256([]byte(password))
	a := u.byName[name]
	if a == nil {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return "", errDenied
	}
	if a.bcrypt == nil {
		if subtle.ConstantTimeCompare(sum[:], a.plain[:]) != 1 {
			return "", errDenied
		}
		return a.role, nil
	}
	u.mu.Lock()
	seen, ok := u.verified[name]
	u.mu.Unlock()
	if ok && subtle.ConstantTimeCompare(sum[:], seen[:]) == 1 {
		return a.role, nil
	}
	if bcrypt.CompareHashAndPassword(a.bcrypt, []byte(password)) != nil {
		return "", errDenied
	}
	u.mu.Lock()
	u.verified[name] = sum
	u.mu.Unlock()
	return a.role, nil
}

// CanAct reports whether the user Wrap authenticated for r is an
// operator: Options.CanAct of a dashboard wrapped by u.
func (u *Users) CanAct(r *http.Request) bool {
	_, role, ok := UserOf(r)
	return ok && role == RoleOperator
}
