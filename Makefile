# mdpress: build, run, test, bench, proto, lint.
# The Go workspace (go.work) holds the modules sdk, core, host and plugins.

GO       ?= go
BIN      := bin
PLUGINS  := auth-apikey meter-credits parse-goldmark style-themes render-chrome render-fpdf sink-disk sink-s3
PKGS     := ./sdk/... ./core/... ./host/... ./plugins/...
MODULES  := sdk core host plugins
TESTFLAGS ?=

# The commit the host is built from, for `mdpress version`, the serving log
# line and mdpress_build_info. Passed by hand rather than left to Go's VCS
# stamping, which a GOFLAGS=-buildvcs=false turns off and which fails the
# build outright on a checkout git calls of dubious ownership; without git
# (a tarball) the binary says "unknown".
REVISION ?= $(shell git describe --always --dirty --abbrev=40 --exclude='*' 2>/dev/null)
REVISION_TIME ?= $(shell git log -1 --format=%cI 2>/dev/null)
VERSION_LDFLAGS := -X github.com/mdpress/mdpress/host/version.revision=$(REVISION) -X github.com/mdpress/mdpress/host/version.revisionTime=$(REVISION_TIME)

.PHONY: all build run test test-short fuzz bench bench-deps proto lint modules clean

all: build

build:
	$(GO) build -ldflags '$(VERSION_LDFLAGS)' -o $(BIN)/mdpress ./host/cmd/mdpress
	$(GO) build -o $(BIN)/plugins/ $(addprefix ./plugins/,$(PLUGINS))

# Serve the embedded default (SQLite, local disk, Chromium if found, else
# fpdf) on 127.0.0.1:8080; the first start creates a dev account and prints
# its API key.
run: build
	$(BIN)/mdpress serve --config configs/mdpress.yaml --dev-account

# Every test. Tests start what they need (Chromium, PostgreSQL, an S3
# server) and skip with a reason what this machine cannot have.
test: modules
	$(GO) test -race -count=1 -timeout 30m $(TESTFLAGS) $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Fuzz every target for FUZZTIME each, one worker at a time. `make test`
# already replays their seeds and any crasher kept under testdata/fuzz.
FUZZTIME ?= 1m
fuzz:
	@for f in $$(grep -rl --include='*_test.go' '^func Fuzz' sdk core host plugins); do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$t ($$(dirname $$f))"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -parallel 1 ./$$(dirname $$f) || exit 1; \
		done; \
	done

# Each module also builds and vets on its own (GOWORK=off), as a plugin
# author outside this repository sees it.
modules:
	@test -z "$$(gofmt -l $(MODULES))" || (echo "gofmt needed:"; gofmt -l $(MODULES); exit 1)
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) vet ./...) || exit 1; done

bench: build
	MDPRESS_BIN_DIR=$(CURDIR)/$(BIN) MDPRESS_MD_TO_PDF_DIR=$(CURDIR)/$(BIN)/md-to-pdf \
		$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 60m ./host/... ./plugins/...

# md-to-pdf (npm), the baseline of BenchmarkVsMdToPdf, without the browser
# puppeteer would download: it drives Debian's chromium, as mdpress does.
bench-deps:
	mkdir -p $(BIN)/md-to-pdf
	cd $(BIN)/md-to-pdf && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --ignore-scripts md-to-pdf@5.2.5

proto:
	cd sdk && protoc -I proto --go_out=internal/pb --go_opt=paths=source_relative \
		--go-grpc_out=internal/pb --go-grpc_opt=paths=source_relative proto/*.proto

lint:
	@test -z "$$(gofmt -l $(MODULES))" || (gofmt -l $(MODULES); exit 1)
	$(GO) vet $(PKGS)
	staticcheck $(PKGS)

clean:
	rm -rf $(BIN)
