# easy-job for Go. `make test` is what CI runs (see .ci/run).
GO ?= go
EASYJOB_TEST_DSN ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export EASYJOB_TEST_DSN

.PHONY: test lint lint-install bench bench-store chaos chaos-clock chaos-patroni chaos-patroni-haproxy chaos-pgbouncer chaos-ha chaos-clock-failover quickstart

test: lint
	$(GO) test -race -count=1 -timeout 15m ./...

# golangci-lint v2 (config: .golangci.yml). It is taken from PATH or from
# where `go install` puts binaries, and `make lint-install` installs it
# there when neither has a v2.
GOLANGCI_LINT_VERSION := v2.15.0
GO_BIN_DIR := $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)
# Shell snippet: sets gl to a golangci-lint v2 binary, or to "" if none.
find_golangci_lint = gl=; for c in "$$(command -v golangci-lint)" "$(GO_BIN_DIR)/golangci-lint"; do \
	  if [ -x "$$c" ] && "$$c" version 2>/dev/null | grep -Eq 'version v?2\.'; then gl=$$c; break; fi; done

lint-install:
	@$(find_golangci_lint); if [ -z "$$gl" ]; then \
	  echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(GO_BIN_DIR)"; \
	  $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi

# gofmt, go vet, go.mod/go.sum tidy, then golangci-lint.
lint: lint-install
	@files=$$(git ls-files -co --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go'); \
	  out=$$(for f in $$files; do [ ! -f "$$f" ] || echo "$$f"; done | xargs -r gofmt -l); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy'"; exit 1; }
	@$(find_golangci_lint); echo "$$gl run ./..."; "$$gl" run ./...

# Short end-to-end benchmark (< 60 s): 3 node processes x 1000 every-second
# tasks, then an idle phase. Prints lag, fires/s, round trips, CPU, memory.
bench:
	$(GO) run ./cmd/easyjob bench --procs 3 --tasks 1000 --duration 25s --idle 8s

# Go benchmarks of the stores, strategies and worker pool (~2 min).
# Postgres: each batched statement (Claim, Release, StartExecutions,
# Finish append/keep/release, RecoverAll, RegisterNew) at 1, 100 and 1000
# rows, in rows/s and ns/row (a plan regression shows as ns/row growing
# with the batch), and retention (PruneHistory by age and by rows over
# 200 000 runs). The node's side of a burst: the delay queue's push and
# pop (DelayQueueBurst), the pool's cost per fire (PoolBurst) and the
# whole firing path from dispatch to the job's start (NodeBurst).
bench-store:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./repository/...
	$(GO) test -run '^$$' -bench . -benchtime 2s ./strategy/...
	$(GO) test -run '^$$' -bench 'PoolBurst|DelayQueueBurst|NodeBurst' -benchtime 1s ./easyjob/internal/...

# Short chaos run (< 120 s): SIGKILL / SIGSTOP node processes, report
# failover, duplicates and lost fires; exits non-zero on a violation.
chaos:
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 100 --overlap-tasks 10 --duration 90s

# Chaos with steps of the database server's clock (+5 s, then back) on a
# private PostgreSQL under libfaketime, with kills and freezes in turn.
chaos-clock:
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 30 --clock-step 5s --fault-every 12s --duration 90s

# Chaos on a private PostgreSQL cluster of 3 Patroni members (synchronous
# mode, three etcd members) started for the run: switchovers, SIGKILLs of
# the leader's postmaster, of the leader's Patroni with its PostgreSQL and
# of the etcd raft leader (10 s down) take turns with node kills and
# freezes; the nodes use a multi-host DSN.
chaos-patroni:
	@command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patroni etcd-server >/dev/null; }
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 30 --chain-depth 2 --patroni --fault-every 20s --duration 150s

# The same through HAProxy (routing to the member whose Patroni REST API
# answers 200 on GET /primary) instead of a multi-host DSN.
chaos-patroni-haproxy:
	@command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1 && { command -v haproxy || test -x /usr/sbin/haproxy; } >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patroni etcd-server haproxy >/dev/null; }
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 30 --chain-depth 2 --patroni --patroni-via haproxy --fault-every 20s --duration 150s

# make chaos through a private PgBouncer (Debian's, pool_mode=transaction)
# in front of the server: node kills and freezes take turns with
# SIGKILLs of PgBouncer itself (started again 2 s later).
chaos-pgbouncer:
	@command -v pgbouncer >/dev/null 2>&1 || test -x /usr/sbin/pgbouncer || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; }
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 100 --overlap-tasks 10 --duration 90s --pgbouncer

# Issue 28 on a fresh machine in about 10 minutes: installs what is
# missing, runs the Patroni mode (multi-host DSN, three etcd members:
# switchovers, SIGKILLs of the leader's postmaster and of its Patroni with
# PostgreSQL, of the etcd raft leader for 10 s, node kills and freezes;
# 280 s) and the PgBouncer mode (PgBouncer SIGKILLed, node
# kills and freezes; 120 s), their reports on stderr, then one JSON line
# per mode on stdout: {"mode":...,"faults":N,"lost":N,"doubled":N,
# "resume_p99_s":X} (--summary-file). Exits non-zero if a run failed.
chaos-ha:
	@pkgs=; command -v patroni >/dev/null 2>&1 || pkgs="$$pkgs patroni"; \
	command -v etcd >/dev/null 2>&1 || pkgs="$$pkgs etcd-server"; \
	{ command -v haproxy || test -x /usr/sbin/haproxy; } >/dev/null 2>&1 || pkgs="$$pkgs haproxy"; \
	{ command -v pgbouncer || test -x /usr/sbin/pgbouncer; } >/dev/null 2>&1 || pkgs="$$pkgs pgbouncer"; \
	if [ -n "$$pkgs" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs >/dev/null; fi
	@sum=$$(mktemp); rc=0; \
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 30 --chain-depth 2 --patroni --fault-every 20s --duration 280s --quiet --summary-file $$sum >&2 || rc=1; \
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 100 --overlap-tasks 10 --fault-every 10s --duration 120s --pgbouncer --quiet --summary-file $$sum >&2 || rc=1; \
	cat $$sum; rm -f $$sum; exit $$rc

# make chaos-clock, each step of the clock a failover to a standby whose
# clock differs: the server is stopped at once and started again with
# the clock moved (+5 s, then back), on the same data.
chaos-clock-failover:
	@ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 30 --chain-depth 2 --clock-step 5s --clock-failover --fault-every 12s --duration 100s

quickstart:
	$(GO) run ./examples/quickstart
