package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Webhook headers.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the
	// body under the webhook's secret (Sign); absent without a secret.
	SignatureHeader = "X-Easyjob-Signature"
	// DeliveryHeader identifies the notification: the event's id and
	// state ("42-firing", "42-resolved"), the same on every retry.
	DeliveryHeader = "X-Easyjob-Delivery"
)

// Webhook is a Notifier that POSTs each Event as JSON to URL. Each
// attempt is bounded by Timeout; a failed attempt (no answer, 5xx, 408,
// 429) is retried up to Retries times, Backoff apart and doubling. Any
// other 4xx answer is final. With a Secret, the body is signed with
// HMAC-SHA256 in the X-Easyjob-Signature header (Verify checks it). The
// URL and the secret never appear in errors or logs: a webhook URL is
// often a secret itself.
type Webhook struct {
	URL    string
	Secret string
	// Timeout bounds one attempt. Default 5s.
	Timeout time.Duration
	// Retries is how many times a failed attempt is retried. Default 3;
	// negative: none.
	Retries int
	// Backoff is the wait before the first retry, doubled for each next
	// (with up to 20 % jitter). Default 500ms.
	Backoff time.Duration
	// Header is added to every request (an Authorization, say).
	Header http.Header
	// Client sends the requests. Default: a client of its own.
	Client *http.Client
}

// Sign returns the signature header's value of body under secret:
// "sha256=" and the hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (the X-Easyjob-Signature header) is
// the signature of body under secret, in constant time. A receiver
// verifies the raw body, before decoding it.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// String names the webhook without its secret, its path or its query.
func (w *Webhook) String() string { return "webhook to " + RedactURL(w.URL) }

// RedactURL keeps a URL's scheme and host: its path, query and user
// may hold a token.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(an invalid URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// errFinal marks an answer a retry would not change.
type errFinal struct{ error }

// Notify POSTs e, retrying as the fields say.
func (w *Webhook) Notify(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("%s: %w", w, err)
	}
	timeout, backoff, retries := w.Timeout, w.Backoff, w.Retries
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	if retries == 0 {
		retries = 3
	}
	retries = max(retries, 0)
	var last error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			wait := backoff << (attempt - 1)
			wait += time.Duration(float64(wait) * 0.2 * jitter(e.ID, attempt))
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%s: %w (after %d attempts: %w)", w, ctx.Err(), attempt, last)
			case <-t.C:
			}
		}
		last = w.post(ctx, timeout, e, body)
		var final errFinal
		if errors.As(last, &final) {
			return fmt.Errorf("%s: %w", w, final.error)
		}
		if last == nil {
			return nil
		}
	}
	if retries == 0 {
		return fmt.Errorf("%s: %w", w, last)
	}
	return fmt.Errorf("%s: %d attempts failed, the last: %w", w, retries+1, last)
}

// jitter is a number in [0, 1) from id and attempt: retries of many
// nodes' notifications spread out.
func jitter(id int64, attempt int) float64 {
	x := uint64(id)*0x9e3779b97f4a7c15 + uint64(attempt)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	return float64(x%1000) / 1000
}

// post makes one attempt.
func (w *Webhook) post(ctx context.Context, timeout time.Duration, e Event, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return errFinal{errors.New("invalid request")}
	}
	for k, vs := range w.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "easyjob-alerts/1")
	req.Header.Set(DeliveryHeader, strconv.FormatInt(e.ID, 10)+"-"+string(e.State))
	if w.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	}
	c := w.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its message holds the URL: keep the cause only
			err = ue.Err
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	_ = resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return errors.New(resp.Status)
	default:
		return errFinal{fmt.Errorf("%s (not retried)", strings.TrimSpace(resp.Status))}
	}
}
