# easy-job for Go. `make test` is what CI runs (see .ci/run).
GO ?= go
EASYJOB_TEST_DSN ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export EASYJOB_TEST_DSN

.PHONY: test lint bench bench-store chaos quickstart

test: lint
	$(GO) test -race -count=1 -timeout 15m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Short end-to-end benchmark (< 60 s): 3 node processes x 1000 every-second
# tasks, then an idle phase. Prints lag, fires/s, round trips, CPU, memory.
bench:
	$(GO) run ./cmd/easyjob bench --procs 3 --tasks 1000 --duration 25s --idle 8s

# Go benchmarks of the stores and strategies (batch claim on Postgres, ...).
bench-store:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./repository/... ./strategy/...

# Short chaos run (< 120 s): SIGKILL / SIGSTOP node processes, report
# failover, duplicates and lost fires; exits non-zero on a violation.
chaos:
	$(GO) run ./cmd/easyjob chaos --procs 3 --tasks 100 --duration 90s

quickstart:
	$(GO) run ./examples/quickstart
