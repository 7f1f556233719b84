# lancens — common tasks. `make run` starts a server on ./data; `make test`
# runs every test.

SHELL   := /bin/bash
GO      ?= go
BIN     := bin/lancens
ARGS    ?=

# Everything builds without cgo (SQLite is pure Go), so the binary is
# static, and the tests test what ships. Binaries name their version and git
# revision (`lancens version`); the toolchain's own VCS stamp wins where it
# has one (a `go install`, or a build in a plain clone).
export CGO_ENABLED = 0
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)
LDFLAGS  := -X github.com/lancens/lancens/internal/buildinfo.version=$(VERSION) \
            -X github.com/lancens/lancens/internal/buildinfo.revision=$(REVISION)
BUILD    := $(GO) build -ldflags "$(LDFLAGS)"

# make dist cross-compiles these GOOS/GOARCH pairs into dist/.
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: all generate check-generated build dist image run test lint bench node-deps versitygw fuzz crashtest postgres chromium podman systemd-analyze

all: build

## generate: regenerate the generated code: gen/ and gen/apiclient (the
## API code, server and client sides, from openapi.yaml, with oapi-codegen),
## vecindex/internal/simd (the vector kernels, with tools/simdgen and avo),
## lance/internal/pb (the Lance format's protocol buffers, with
## tools/protogen and protoc-gen-go) and store/storetrace (the tracing
## wrappers of the store interfaces, with tools/storetracegen); all are
## go.mod tools
GENERATED := gen/ lance/internal/pb/ vecindex/internal/simd/ store/storetrace/
generate:
	$(GO) generate ./gen/... ./lance/internal/pb/... ./vecindex/internal/simd/... ./store/storetrace/...

## check-generated: fail if the generated code is not what `make generate`
## produces
check-generated: generate
	@git diff --exit-code --stat -- $(GENERATED) || { echo "generated code is out of date: run make generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED))" || { git status --porcelain -- $(GENERATED); echo "generated code has untracked changes" >&2; exit 1; }

## build: build the static lancens binary into bin/ (no dynamic libraries:
## `ldd bin/lancens` says "not a dynamic executable")
build:
	$(BUILD) -o $(BIN) ./cmd/lancens

## dist: cross-compile lancens for PLATFORMS into dist/ (lancens-OS-ARCH),
## with their SHA-256 checksums in dist/SHA256SUMS
dist:
	@rm -rf dist && mkdir -p dist
	@for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; \
	  echo "== dist/lancens-$$os-$$arch"; \
	  GOOS=$$os GOARCH=$$arch $(BUILD) -trimpath -o dist/lancens-$$os-$$arch ./cmd/lancens || exit 1; \
	done
	cd dist && sha256sum lancens-* > SHA256SUMS && cat SHA256SUMS

## image: build the container image of lancens for linux/IMAGE_ARCH (this
## machine's by default) into $(IMAGE_OUT), with no container daemon
## (cmd/lancens-image, go-containerregistry): load it with
## `docker load -i $(IMAGE_OUT)` or `podman load -i $(IMAGE_OUT)`. The
## Dockerfile builds the same image with a daemon. Reproducible: file times
## are the commit's
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
IMAGE_TAG  ?= lancens:$(or $(VERSION),dev)
IMAGE_OUT  ?= bin/lancens-image.tar
image:
	GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o bin/linux-$(IMAGE_ARCH)/lancens ./cmd/lancens
	$(GO) run ./cmd/lancens-image -binary bin/linux-$(IMAGE_ARCH)/lancens -arch $(IMAGE_ARCH) \
	  -version "$(or $(VERSION),dev)" -revision "$(or $(REVISION),unknown)" -tag "$(IMAGE_TAG)" \
	  -created "$$(git log -1 --format=%ct 2>/dev/null || echo 0)" -out $(IMAGE_OUT)

## run: start lancens on 127.0.0.1:2333 (loopback only; ARGS="--addr :2333"
## for every interface) with ./data/lancens.db and ./data/warehouse
run: build
	./$(BIN) serve $(ARGS)

## test: run every test: Go tests, then the end-to-end tests of node/e2e,
## which drive a real lancens with the LanceDB Node SDK and its web console
## in Chromium. The Go tests print
## one line per package as soon as it is done (go test -json through
## internal/testkit/testlines: plain go test ./... holds each line back until the
## packages before it are done, and -v prints every test of every package),
## and the output of whatever failed
test: node-deps postgres versitygw chromium podman systemd-analyze build
	set -o pipefail; $(GO) test -json ./... | $(GO) run ./internal/testkit/testlines
	cd node && LANCENS_BIN=$(CURDIR)/$(BIN) node --test e2e/

## lint: gofmt (outside gen/), go vet, and the layering of the packages
## (tools/layercheck: no package imports one above it)
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
	  test -z "$$unformatted" || { echo "not gofmt-formatted:" $$unformatted >&2; exit 1; }
	$(GO) vet ./...
	$(GO) run ./tools/layercheck

## crashtest: TRIALS crash trials (default 100): kill -9 a real server during
## concurrent writes, restart it, check every acknowledged write, that the
## writes in flight committed whole or not at all, and that every file of
## every recorded version is there and readable (make test runs 3 trials;
## trials alternate --commit-durability full and process, and
## LANCENS_CRASH_DURABILITY=full|process keeps to one;
## LANCENS_CRASH_SYNC=NORMAL tries the other --sync mode)
TRIALS ?= 100
crashtest:
	LANCENS_CRASH_TRIALS=$(TRIALS) $(GO) test ./cmd/lancens -run '^TestCrashTrials$$' -count=1 -timeout 0 -v

## fuzz: run every Go fuzz target (each func FuzzXxx(*testing.F) of the
## module's tests) for FUZZTIME each, one after the other, with
## tools/fuzzrun; FUZZMINIMIZE bounds how long a new input is minimised
## (10 s, not Go's 60 s). Fails if any target fails; the failing input is
## saved under the package's testdata/fuzz/ (commit it with the fix, as a
## regression seed). fuzzrun stops each target with an interrupt when its
## time is up rather than with go test's -fuzztime deadline, which Go
## 1.26's coordinator can fail a clean target on (go.dev/issue/75804)
FUZZTIME     ?= 10m
FUZZMINIMIZE ?= 10s
fuzz:
	$(GO) run ./tools/fuzzrun -go $(GO) -fuzztime $(FUZZTIME) -minimizetime $(FUZZMINIMIZE)

## postgres: install PostgreSQL's server binaries (Debian's postgresql
## package) if they are missing: the PostgreSQL store's tests start a
## throwaway cluster from them (internal/testkit/pgtest). Installing needs root and
## apt-get; without them the tests skip (and fail under CI=true). No
## cluster of the package's own is created.
postgres:
	@if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || [ -n "$$LANCENS_PG_BIN" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing PostgreSQL (apt-get install postgresql)"; \
	  mkdir -p /etc/postgresql-common/createcluster.d && \
	  echo 'create_main_cluster = off' > /etc/postgresql-common/createcluster.d/lancens.conf && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	else echo "PostgreSQL is not installed, and installing it needs root and apt-get: its tests will skip" >&2; fi

## chromium: install Debian's Chromium if it is missing: the web console's
## browser tests (node/e2e/console.test.mjs) drive it through playwright-core,
## which never downloads a browser of its own. Installing needs root and
## apt-get; without them the browser tests skip (and fail under CI=true).
chromium:
	@if [ -x /usr/bin/chromium ] || [ -n "$$LANCENS_CHROMIUM" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Chromium (apt-get install chromium)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "Chromium is not installed, and installing it needs root and apt-get: the console's browser tests will skip" >&2; fi

## podman: install Debian's podman and runc if they are missing: the image
## test (cmd/lancens-image) loads the image and runs it with them, in a
## storage directory of its own. Installing needs root and apt-get; without
## them that test skips (and fails under CI=true).
podman:
	@if command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing podman and runc (apt-get install podman runc)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc >/dev/null; \
	else echo "podman is not installed, and installing it needs root and apt-get: the image's podman test will skip" >&2; fi

## systemd-analyze: install systemd's tools (Debian's systemd package) if
## systemd-analyze is missing: TestSystemdUnit (cmd/lancens) checks
## deploy/systemd/lancens.service with `systemd-analyze verify` and
## `security`. Nothing is started. Installing needs root and apt-get;
## without them that part of the test skips (and fails under CI=true).
systemd-analyze:
	@if command -v systemd-analyze >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing systemd-analyze (apt-get install systemd)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null; \
	else echo "systemd-analyze is not installed, and installing it needs root and apt-get: the unit's check will skip" >&2; fi

## node-deps: install the Node packages (LanceDB SDK) of node/ from its lock file
node-deps: node/node_modules/.package-lock.json
node/node_modules/.package-lock.json: node/package.json node/package-lock.json
	cd node && npm ci --no-audit --no-fund

## versitygw: install the Versity S3 Gateway the object-storage tests run
## against (skipped when it is already there; about 3 minutes cold)
VERSITYGW_VERSION := v1.8.0
VERSITYGW         := $(HOME)/.cache/lancens/bin/versitygw
versitygw: $(VERSITYGW)
$(VERSITYGW):
	GOBIN=$(dir $(VERSITYGW)) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

## bench: benchmarks against peers measured in the same run
## (SUITES=catalog,data,search,objectstore,remote-s3,replicas,soak,lance;
## SCALE=0.1 shrinks the workloads for a quick run). remote-s3 measures
## queries on an S3 warehouse, cold and warm, and replicas queries through a
## second PostgreSQL replica. lance, the pure-Go Lance library against the
## LanceDB SDK on 1M rows of 3 KB, needs about 15 GB of disk and 10 GB of
## memory at SCALE=1
SUITES ?= catalog,data,search,objectstore,remote-s3,replicas,soak,lance
SCALE  ?= 1
bench: node-deps postgres versitygw
	$(GO) run ./cmd/lancens-bench -suite $(SUITES) -scale $(SCALE)
