# sparrowfleet build, test and tooling targets. `make help` lists them.
GO          ?= go
BIN         ?= bin/sparrow
THRIFT      ?= thrift
IDL         := thrift/sparrow.thrift
GO_PREFIX   := github.com/sparrowfleet/sparrow/thrift/gen-go/
GOFILES      = $(shell git ls-files '*.go' | grep -v '^thrift/gen-')
# Debian's interpreter, which has python3-thrift; a pyenv python3 on PATH
# usually does not.
PYTHON      ?= /usr/bin/python3
# The Python package ships its own copy of the generated module, generated
# by the same compiler from the same IDL: pip builds the package from
# clients/python alone, so it cannot reach thrift/gen-py.
PY_GEN      := clients/python/sparrowfleet/_gen
# The package's copy imports its own modules under the package's name
# (an extended service imports the service it extends).
PY_PKG_OPT  := package_prefix=sparrowfleet._gen.

.PHONY: help build test test-short test-python run pgo thrift thrift-check lint fmt clean fuzz-short docs

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the sparrow binary into bin/
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/sparrow

test: ## run every test with the race detector, then the dashboard's browser tests and the Helm chart's test (each its own module), then the Python client's
	$(GO) test -race -count=1 -timeout 20m ./...
	cd integration/browser && $(GO) test -race -count=1 -timeout 5m ./...
	cd deploy/helmtest && $(GO) test -count=1 -timeout 10m ./...
	$(MAKE) test-python

test-python: build ## the Python client package's tests (clients/python) against live loopback fleets of bin/sparrow, with Debian's python3-thrift
	SPARROW_BIN=$(abspath $(BIN)) PYTHONPATH=$(abspath clients/python) PYTHONDONTWRITEBYTECODE=1 \
	  $(PYTHON) -m unittest discover -s clients/python/tests -t clients/python -v

test-short: ## run the unit tests only
	$(GO) test -race -short -count=1 ./...

run: build ## run the embedded loopback fleet (sparrow local) with its defaults
	$(BIN) local

# The simulator's run is long enough for a couple of hundred samples at
# pprof's 100 Hz, so that its hot paths are not missed.
pgo: build ## refresh cmd/sparrow/default.pgo, the CPU profile Go's build optimises with (the simulator's Figure-3 point, and a scheduler and a node monitor at 800 tasks/s)
	$(BIN) sim --policy late --load 0.9 --jobs 8000 --json --cpuprofile bin/pgo-sim.pprof > /dev/null
	$(BIN) bench procs --rates 200 --jobs 3000 --profile 12s --out bin/pgo-procs --log-level warn > /dev/null
	$(GO) tool pprof -proto bin/pgo-sim.pprof bin/pgo-procs/rate-200/sched0.cpu.pprof bin/pgo-procs/rate-200/nm0.cpu.pprof > cmd/sparrow/default.pgo

docs: ## regenerate the command and metrics reference (docs/reference) from the code
	$(GO) run ./cmd/sparrow gen-docs --out docs/reference

thrift: ## regenerate the Go and Python code from the IDL (and the Python package's copy)
	rm -rf thrift/gen-go thrift/gen-py $(PY_GEN)
	mkdir -p thrift/gen-go thrift/gen-py $(PY_GEN)
	$(THRIFT) --gen go:package_prefix=$(GO_PREFIX),skip_remote -out thrift/gen-go $(IDL)
	$(THRIFT) --gen py -out thrift/gen-py $(IDL)
	$(THRIFT) --gen py:$(PY_PKG_OPT) -out $(PY_GEN) $(IDL)

thrift-check: ## fail if the checked-in generated code does not match the IDL
	@tmp=$$(mktemp -d) && \
	mkdir -p $$tmp/gen-go $$tmp/gen-py $$tmp/gen-pkg && \
	$(THRIFT) --gen go:package_prefix=$(GO_PREFIX),skip_remote -out $$tmp/gen-go $(IDL) && \
	$(THRIFT) --gen py -out $$tmp/gen-py $(IDL) && \
	$(THRIFT) --gen py:$(PY_PKG_OPT) -out $$tmp/gen-pkg $(IDL) && \
	diff -r $$tmp/gen-go thrift/gen-go && diff -r -x __pycache__ $$tmp/gen-py thrift/gen-py && diff -r -x __pycache__ $$tmp/gen-pkg $(PY_GEN) && \
	rm -rf $$tmp && echo "generated Thrift code matches $(IDL)"

lint: ## gofmt and go vet
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt: ## gofmt every file
	gofmt -w $(GOFILES)

# Every fuzz target in the module, found by name, so a new one is never
# left out. Counts, not durations: see docs/FUZZING.md.
FUZZ_COUNT ?= 10000x

fuzz-short: ## run every fuzz target briefly (each for FUZZ_COUNT inputs)
	@set -e; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "fuzz $$dir $$f"; \
	    $(GO) test -run NONE -fuzz "^$$f$$" -fuzztime $(FUZZ_COUNT) -fuzzminimizetime 2s $$dir/; \
	  done; done

clean: ## remove build output
	rm -rf bin

IMAGE       ?= sparrowfleet:dev

.PHONY: docker e2e screenshots

screenshots: ## the README's dashboard screenshots: a loopback fleet photographed by sparrow ui --screenshot (needs Chromium)
	scripts/ui/screenshots.sh docs/img

docker: build ## build the static binary, then the FROM-scratch image $(IMAGE)
	docker build -t $(IMAGE) .

e2e: docker ## fault-injection tests against a containerised fleet (and two of them with the short-jobs policy and a coordinator), then the compose quick start, then a Swarm stack upgraded from an older build under load (needs docker, docker-compose, haproxy and the git history)
	E2E_IMAGE=$(IMAGE) scripts/e2e/run.sh
	E2E_IMAGE=$(IMAGE) E2E_SHORT_JOBS=1 E2E_COORDINATOR=1 E2E_SCENARIOS="nm-kill scheduler-kill" E2E_OUT=bin/e2e-shortjobs scripts/e2e/run.sh
	SPARROW_IMAGE=$(IMAGE) scripts/e2e/quickstart.sh
	FAIR_IMAGE=$(IMAGE) scripts/e2e/fairness.sh
	LOC_IMAGE=$(IMAGE) scripts/e2e/locality.sh
	ROLL_IMAGE=$(IMAGE) scripts/e2e/rolling.sh
	FORM_IMAGE=$(IMAGE) scripts/e2e/formation.sh
	SWARM_IMAGE=$(IMAGE) scripts/e2e/swarm.sh

.PHONY: interop-java

interop-java: ## JVM interop test: original-style Java frontend and backends, 70 s idle, 10 MiB job, and against a saturated fleet (needs a JDK, thrift, libthrift-java)
	SPARROW_JVM_INTEROP=1 SPARROW_INTEROP_REQUIRE=1 $(GO) test -count=1 -run TestJVMInterop -v ./integration/
