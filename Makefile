# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STORE ?= $(HOME)/store
ALI_ONS := tests/interop/js/node_modules/ali-ons/package.json
# issue 19's RocketMQ 5 clients (their section is below interop-js)
RMQ5_VENV := .venv-rmq5
RMQ5_STAMP := $(RMQ5_VENV)/.installed
NODE5_CLIENT := tests/interop/node5/node_modules/rocketmq-client-nodejs/package.json

.PHONY: protos run test lint typecheck bench bench-pop bench-timer timer-hour clean venv system-deps interop-js interop-rmq5 simulate faults fuzz soak

venv: $(STAMP)

# the compiled record path (setup.py): an edit of its C source rebuilds; a compile error fails
NATIVE_SRC := setup.py $(wildcard src/rocketq/_native/*.c src/rocketq/_native/*.h)

$(STAMP): pyproject.toml $(NATIVE_SRC)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,interop,spark,grpc]'
	command -v java >/dev/null || (apt-get update && apt-get install -y default-jre-headless)
	touch $(STAMP)

# issue 19: the protobuf and gRPC modules generated from src/rocketq/proxy/protos/*.proto
protos: $(STAMP)
	$(BIN)/python -m rocketq.proxy.protos.regenerate

run: $(STAMP)
	$(BIN)/rocketq server --store $(STORE) -c $(STORE)/broker.conf --metrics-port 5557 --dashboard-port 8080

test: lint system-deps $(ALI_ONS) $(RMQ5_STAMP) $(NODE5_CLIENT)
	$(BIN)/python -m pytest -q

# the Raft simulation's long sample (make test runs 2,000 seeds); a failing seed replays with
# `$(BIN)/python -m rocketq.testing.raft_simulation --replay SEED [--nodes N]`
SEEDS ?= 100000
simulate: $(STAMP)
	$(BIN)/python -m rocketq.testing.raft_simulation --seeds $(SEEDS) --nodes 3 --jobs 2
	$(BIN)/python -m rocketq.testing.raft_simulation --seeds $$(( $(SEEDS) / 4 )) --nodes 5 --jobs 2

# the controller-mode fault suite's long schedule (make test runs 30 cycles in
# tests/e2e/test_failover_faults.py): real processes on loopback, issue 20's controller
# profile, a fault every 10-20 s (GAP=5: every 5-10 s)
CYCLES ?= 500
GAP ?= 10
faults: $(STAMP)
	$(BIN)/python -m rocketq.testing.failover.runner --cycles $(CYCLES) --gap $(GAP)

# the C request frames and record paths under AddressSanitizer and UndefinedBehaviorSanitizer:
# a sanitized copy of the extensions, differential against the Python reference (make test
# runs a short sample in tests/remoting/test_native_frames.py); a finding prints its seed
FUZZ_SECONDS ?= 300
fuzz: $(STAMP)
	$(BIN)/python -m rocketq.testing.frame_fuzz --sanitize . --seconds $(FUZZ_SECONDS) \
	  --corpus tests/remoting/fixtures

# the false-election soak: the controller profile under full SYNC load, no fault, elections
# counted by the controllers' election_total; exits 1 on any after the first (make test runs
# a bounded sample in tests/e2e/test_failover_soak.py)
MINUTES ?= 30
soak: $(STAMP)
	$(BIN)/python -m rocketq.testing.failover.soak --minutes $(MINUTES)

# Debian packages the tests drive: a real Prometheus (scrapes /metrics) and headless Chromium
# (the dashboard's browser tests), and curl (the README's dashboard block); installed only when missing
SYSTEM_TOOLS := prometheus chromium curl
system-deps:
	@missing=""; for tool in $(SYSTEM_TOOLS); do \
	  command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/store_bench.py --seconds 3
	$(BIN)/python bench/broker_bench.py
	$(BIN)/python bench/client_bench.py --count 8000 --size 256
	$(BIN)/python bench/ha_bench.py

# issue 18: POP against pull and the redelivery lag; timer lateness and RSS (a few minutes each)
bench-pop: $(STAMP)
	$(BIN)/python bench/pop_bench.py

bench-timer: $(STAMP)
	$(BIN)/python bench/timer_bench.py lateness
	$(BIN)/python bench/timer_bench.py rss --count 1000000 --cap 150

# timers due up to an hour ahead, each checked delivered once and not early (runs ~61 minutes)
timer-hour: $(STAMP)
	$(BIN)/python bench/timer_bench.py span --seconds 3600 --count 3600

# ali-ons (npm) for tests/interop/test_ali_ons.py; node and npm come from apt where missing
interop-js: $(ALI_ONS)

$(ALI_ONS): tests/interop/js/package.json
	@command -v npm >/dev/null 2>&1 || { \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends nodejs npm; }
	cd tests/interop/js && npm install --no-package-lock --no-audit --no-fund --loglevel=error
	touch $(ALI_ONS)

# issue 19: the official RocketMQ 5 clients for tests/interop/test_rmq5_*.py. The Python client
# (rocketmq-python-client, pinned in tests/interop/rmq5/requirements.txt) owns the top-level
# package `rocketmq`, as the C++ client rocketmq==0.4.4 in .venv does, and pins protobuf and
# grpcio-tools of its own: it gets a venv of its own, driven in a subprocess. The Node client
# (rocketmq-client-nodejs, npm) gets a folder of its own beside ali-ons'.
interop-rmq5: $(RMQ5_STAMP) $(NODE5_CLIENT)

$(RMQ5_STAMP): tests/interop/rmq5/requirements.txt
	test -x $(RMQ5_VENV)/bin/python || $(PYTHON) -m venv $(RMQ5_VENV)
	$(RMQ5_VENV)/bin/python -m pip install --quiet -r tests/interop/rmq5/requirements.txt
	touch $(RMQ5_STAMP)

# after ali-ons: its target installs node and npm where they are missing
$(NODE5_CLIENT): tests/interop/node5/package.json $(ALI_ONS)
	cd tests/interop/node5 && npm install --no-package-lock --no-audit --no-fund --loglevel=error
	touch $(NODE5_CLIENT)

clean:
	rm -rf $(VENV) $(RMQ5_VENV) build *.egg-info
