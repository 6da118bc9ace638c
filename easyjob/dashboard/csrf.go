package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
)

// CSRF protection of the actions: a double-submitted token (a random
// cookie the forms repeat in a hidden field, compared in constant time)
// plus the browser's own word on where a request comes from
// (http.CrossOriginProtection: Sec-Fetch-Site, Origin). A page of another
// site can neither read the cookie nor send a same-origin request.

const (
	csrfCookie = "easyjob_csrf"
	csrfField  = "csrf"
	tokenBytes = 32
)

var (
	errCSRF     = errors.New("the form's CSRF token is missing or does not match: reload the page and try again")
	crossOrigin = http.NewCrossOriginProtection()
)

// csrfToken returns the token of r's cookie, or sets a new cookie and
// returns its token.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && validToken(c.Value) {
		return c.Value
	}
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: tok, Path: baseOf(r) + "/",
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	return tok
}

// validToken reports whether s has the form of a token.
func validToken(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == tokenBytes
}

// checkCSRF returns an error unless r (a parsed POST) is a same-origin
// request whose form repeats the token of its cookie.
func checkCSRF(r *http.Request) error {
	if err := crossOrigin.Check(r); err != nil {
		return err
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || !validToken(c.Value) {
		return errCSRF
	}
	if subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue(csrfField))) != 1 {
		return errCSRF
	}
	return nil
}
