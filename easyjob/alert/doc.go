// Package alert is what easyjob's alerts are made of: a Rule says what to
// watch (a task's failures, late or missed fires, a dead-man's silence,
// a node's death, a task no live node has a handler for), an Event is
// one alert as it fires or resolves, and a Notifier delivers it: a Go
// callback (Func) or the built-in Webhook (a JSON POST signed with
// HMAC-SHA256, with timeouts and retries).
//
// Rules come from code (easyjob.Config.Alerts, delivered to
// Config.AlertNotifiers or the rule's own Notifiers) and from the
// database at runtime (`easyjob alerts add`, the dashboard's alerts
// page), which may name a webhook of their own. Every node of a group
// evaluates them from what it sees anyway (its runs' finishes and
// starts, its upkeep); the store deduplicates: each occurrence is
// recorded once for the whole group, the node whose record won delivers
// it, and a peer takes over the delivery of a node that died before it
// delivered. When the condition clears (a success after failures, a
// fire on time, the node or the handler back) the same event is
// resolved and a resolved notification is delivered, once.
//
// A notification that failed is retried with backoff; one whose
// delivering node died mid-delivery may be delivered again by the peer
// that takes it over, with the same Event.ID and State: a receiver that
// must never act twice keys on (id, state) (the webhook's
// X-Easyjob-Delivery header).
package alert
