# lancens — common tasks. `make run` starts a server on ./data; `make test`
# runs every test.

GO      ?= go
BIN     := bin/lancens
ARGS    ?=

.PHONY: all generate check-generated build run test lint bench node-deps

all: build

## generate: regenerate gen/ from openapi.yaml
generate:
	$(GO) generate ./gen/

## check-generated: fail if gen/ is not what `make generate` produces
check-generated: generate
	@git diff --exit-code --stat -- gen/ || { echo "gen/ is out of date: run make generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen/)" || { git status --porcelain -- gen/; echo "gen/ has untracked changes" >&2; exit 1; }

## build: build the lancens binary into bin/
build:
	$(GO) build -o $(BIN) ./cmd/lancens

## run: start lancens on :2333 with ./data/lancens.db and ./data/warehouse
run: build
	./$(BIN) serve $(ARGS)

## test: run every test: Go tests, then the end-to-end tests of node/e2e,
## which drive a real lancens with the LanceDB Node SDK
test: node-deps build
	$(GO) test ./...
	cd node && LANCENS_BIN=$(CURDIR)/$(BIN) node --test e2e/

## lint: gofmt (outside gen/) and go vet
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
	  test -z "$$unformatted" || { echo "not gofmt-formatted:" $$unformatted >&2; exit 1; }
	$(GO) vet ./...

## node-deps: install the Node packages (LanceDB SDK) of node/ from its lock file
node-deps: node/node_modules/.package-lock.json
node/node_modules/.package-lock.json: node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund

## bench: benchmarks against peers measured in the same run (SUITES=catalog,data,search)
SUITES ?= catalog,data,search
SCALE  ?= 1
bench: node-deps
	$(GO) run ./cmd/lancens-bench -suite $(SUITES) -scale $(SCALE)
