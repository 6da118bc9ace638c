# easy-job for Go. `make test` is what CI runs (see .ci/run).
GO ?= go
EASYJOB_TEST_DSN ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export EASYJOB_TEST_DSN

.PHONY: test lint bench chaos quickstart

test: lint
	$(GO) test -race -count=1 -timeout 15m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./repository/...

quickstart:
	$(GO) run ./examples/quickstart
