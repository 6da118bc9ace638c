package alert_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/easyjob-go/easyjob/easyjob"
	"github.com/easyjob-go/easyjob/easyjob/alert"
)

// Rules in code, delivered to a signed webhook and to a Go callback.
func Example() {
	hook := &alert.Webhook{URL: "https://alerts.example.com/easyjob", Secret: os.Getenv("EASYJOB_WEBHOOK_SECRET")}
	page := alert.Func(func(ctx context.Context, e alert.Event) error {
		log.Printf("%s %s: %s", e.State, e.Rule, e.Message)
		return nil
	})
	cfg := easyjob.Config{
		DSN: os.Getenv("DATABASE_URL"),
		Alerts: []alert.Rule{
			{Kind: alert.ConsecutiveFailures, Task: "report", Count: 3},
			{Kind: alert.Late, Task: "report", After: 30 * time.Second},
			{Kind: alert.Deadman, Task: "backup", After: 26 * time.Hour},
			{Kind: alert.NodeDied, Notifiers: []alert.Notifier{page}},
		},
		AlertNotifiers: []alert.Notifier{hook},
	}
	_ = cfg // easyjob.Run(ctx, cfg)
}

// A receiver checks the signature of the raw body before it trusts it,
// and keys on the delivery header to act once.
func ExampleVerify() {
	secret := os.Getenv("EASYJOB_WEBHOOK_SECRET")
	http.HandleFunc("POST /easyjob", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil || !alert.Verify(secret, body, r.Header.Get(alert.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		fmt.Println("delivery", r.Header.Get(alert.DeliveryHeader)) // e.g. "42-firing"
		w.WriteHeader(http.StatusNoContent)
	})
}

func ExampleSign() {
	fmt.Println(alert.Sign("Jefe", []byte("what do ya want for nothing?")))
	// Output: sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843
}

func ExampleRule_DefaultName() {
	fmt.Println(alert.Rule{Kind: alert.Late, Task: "report", After: 30 * time.Second}.DefaultName())
	// Output: late:report:30s
}
