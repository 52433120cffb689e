# The two quick-start commands: `make run` and `make test`. Both install what they need first.
SWIFT ?= swift
ARGS ?=

.PHONY: run test deps build release bench bench-all clean reliability security package

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build --product ckbrowse

## Build and start ckbrowse (pass arguments with ARGS="...").
run: build
	@"$$($(SWIFT) build --show-bin-path)/ckbrowse" $(ARGS)

## Run every test: unit and integration tests, then the end-to-end browser test in tmux.
test: deps
	tests/architecture/check.py
	$(SWIFT) test
	tests/e2e/browser.sh
	tests/e2e/apply.sh
	tests/e2e/staging.sh
	tests/e2e/notifications.sh
	tests/e2e/commands.sh
	tests/e2e/identity.sh
	tests/e2e/typing.sh
	tests/e2e/finding.sh
	tests/e2e/editing.sh
	tests/e2e/sharing.sh
	tests/e2e/schema.sh
	tests/e2e/cors.sh
	tests/e2e/assets.sh
	tests/e2e/screens.sh
	tests/e2e/subscriptions.sh
	tests/e2e/bulk.sh
	tests/reliability/run.sh
	tests/security/run.sh

## Only the security tests (the threat model of SERVER.md, tried as an attacker would).
security: deps
	tests/security/run.sh

## Only the reliability tests (crash safety, fuzzing, load, throttling, terminal, secrets).
reliability: deps
	tests/reliability/run.sh

release: deps
	$(SWIFT) build -c release --product ckbrowse

## The static release binary and the Debian package in dist/, checked (see README, "Install").
package: deps
	scripts/package.sh

## Print the benchmark figures (release build).
bench: release
	"$$($(SWIFT) build -c release --show-bin-path)/ckbrowse" bench decode
	"$$($(SWIFT) build -c release --show-bin-path)/ckbrowse" bench serve

# Records per zone of bench-all's query-scaling table (the first is the base of the ratios).
SCALING ?= 2000,100000,1000000

## Every figure of PERFORMANCE.md in one run: issue 33's table (query scaling, pages against nginx, the
## fixture loop against moto, binary size and first frame), then the browser's and callgrind's counts.
## Every figure is of the binary that ships (scripts/build-static.sh, as scripts/package.sh builds it):
## one release build serves them all. SCALING=2000,100000 leaves out the 1,000,000-record rows.
BENCH_BIN = .build-static/release/ckbrowse
bench-all: deps
	@[ -x $(BENCH_BIN) ] && [ -z "$$REBUILD" ] || scripts/build-static.sh
	@echo "== bench serve (modify batch, change feeds, query scaling at $(SCALING) records; changes page and lookup)"
	$(BENCH_BIN) bench serve --scaling $(SCALING)
	@echo "== pages against nginx serving the same bytes"
	CKBROWSE_BIN=$(BENCH_BIN) scripts/bench-nginx.sh 10 4 3
	@echo "== the server as a test fixture, against moto"
	CKBROWSE_BIN=$(BENCH_BIN) scripts/bench-fixture.sh 5 3
	@echo "== binary size and first frame (static build)"
	CKBROWSE_STATIC=$(BENCH_BIN) scripts/bench-startup.sh 5
	@echo "== the browser"
	$(BENCH_BIN) bench decode
	$(BENCH_BIN) bench terminal
	$(BENCH_BIN) bench terminal --term tmux-256color
	$(BENCH_BIN) bench reopen
	$(BENCH_BIN) bench memory
	$(BENCH_BIN) bench network --delay-ms 150
	$(BENCH_BIN) bench network --delay-ms 300
	@echo "== instructions per key press and per served page (callgrind, static build)"
	CKBROWSE_STATIC=$(BENCH_BIN) scripts/bench-callgrind.sh

clean:
	rm -rf .build
