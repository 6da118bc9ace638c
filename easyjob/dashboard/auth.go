package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
)

// BasicAuth wraps h so that every request must carry HTTP basic
// authentication with user and password; others get 401 Unauthorized.
// Both are compared in constant time. It is the auth hook of the
// standalone `easyjob dashboard`; an embedding service wraps the handler
// in its own authentication instead (and may set Options.CanAct).
func BasicAuth(h http.Handler, realm, user, password string) http.Handler {
	wantUser, wantPass := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
	challenge := "Basic realm=" + strconv.Quote(realm) + ", charset=\"UTF-8\""
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		gotUser, gotPass := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		userOK := subtle.ConstantTimeCompare(gotUser[:], wantUser[:])
		passOK := subtle.ConstantTimeCompare(gotPass[:], wantPass[:])
		if !ok || userOK&passOK != 1 {
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
