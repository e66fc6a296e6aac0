# Two commands for a newcomer on a fresh Debian machine: `make demo` and `make test`.
# Each sets up its own virtualenv (.venv) and installs what it needs.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SUM := $(shell cksum pyproject.toml | cut -d' ' -f1)
# make test needs the development toolchain (.[dev]); make demo only what a table and the hub
# run with (.[hardware,hub]): no linters, type checker, browser driver or fuzzers.
STAMP := $(VENV)/.installed-dev-$(SUM)
RUNTIME_STAMP := $(VENV)/.installed-runtime-$(SUM)
MICROPYTHON := tests/micropython/node_modules/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test demo lint typecheck unit compiled bench clean venv system-deps pi-check

venv: $(STAMP)

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "Python 3.11 or newer is needed (found $$($(PYTHON) --version))"; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || \
	  { echo "installing python3-venv with apt"; $(SUDO) apt-get update -q && \
	    $(SUDO) apt-get install -y -q python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# No byte-compiling at install (16 s of 39 s here): `make unit` compiles in two processes
# (6 s the first time, a second after).
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --no-compile -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $@ $(RUNTIME_STAMP)

# The development toolchain holds everything the runtime needs: nothing more to install then.
# No byte-compiling at install (5 s of the demo's first minute): the first run compiles what it
# imports (and keeps it, unless PYTHONDONTWRITEBYTECODE is set).
$(RUNTIME_STAMP): pyproject.toml | $(PY)
	@if [ -e $(STAMP) ]; then echo "the development toolchain is installed: it holds the runtime"; \
	  else $(PY) -m pip install -q --no-compile -e '.[hardware,hub]'; fi
	rm -f $(VENV)/.installed-runtime-*
	touch $@

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m tests.commit_messages

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The tests start their own Mosquitto brokers, make certificates with openssl, check the
# shell scripts with shellcheck and the systemd unit with systemd-analyze, and run the
# recorder on PostgreSQL (the local server, or a temporary cluster they start), drive the
# floor dashboard with Playwright in Debian's Chromium (its headless shell; the dashboard's
# bench in the full browser), and (as root) build a venue's network in network namespaces
# with iproute2, dropping packets with nftables; the shoe firmware runs on MicroPython's
# WebAssembly port under Node.js.
system-deps:
	@missing=""; \
	  command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing="$$missing mosquitto"; \
	  command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	  command -v shellcheck >/dev/null 2>&1 || missing="$$missing shellcheck"; \
	  command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	  command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	  command -v chromium-headless-shell >/dev/null 2>&1 || missing="$$missing chromium-headless-shell"; \
	  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing="$$missing iproute2"; \
	  command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || missing="$$missing nftables"; \
	  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing="$$missing nats-server"; \
	  command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	  command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	  if [ -n "$$missing" ]; then echo "installing$$missing with apt"; \
	    $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $$missing; fi

# Five processes (pytest-xdist) on two cores: most tests wait on brokers, clusters, pty's and
# browsers, not the CPU (the CPU is 60 % busy with three; four took pytest from 243 s to 198 s
# in one tree, the floor's browser tests split in two modules so that no file is the tail; on
# a slower machine five took it from 282 s to 257 s, and six to 260 s: the CPU is full). The
# pty dealing tests, which deal at twenty times a dealer's pace, no longer estimate the
# simulated shoe's clock (a crowded host's delays, magnified twenty times, once turned a rhythm
# into a pause): the simulated table pins it (tablectl/shoe_to_core.py, ShoeClock.pin).
# Each file runs in one process, in order: a module's tests share its fixtures (a venue, a hub).
# Byte-compiled first: where PYTHONDONTWRITEBYTECODE is set (this machine sets it), no import
# writes a .pyc and every tablectl, hub and bench process the tests start compiles what it
# imports again (1.2 s of CPU for the hub's modules, 0.7 s compiled). A compile error here is
# the import's to report, so it does not stop the run. The test modules too, as pytest reads
# them: their assertions rewritten (tests/assertion_cache.py), once, where each of the four
# workers rewrote every one of them to collect the suite (a worker's collection: 1.2 s of CPU
# with them written ahead, 3.7-4.0 s without), and hypothesis's Unicode tables (1.7 s of CPU in
# each worker that draws text, on a fresh clone).
unit: compiled
	$(PYTEST)

# The tests' scratch (their databases, brokers, browsers' profiles) in memory where the machine
# has a tmpfs that runs programs: the disk's fsync is not what they test, and on a loaded
# machine one SQLite commit of the hub's (synchronous=FULL) waited 10 s for the disk, past
# the deadline a floor request waits for the hub.
TEST_TMP := $(shell [ -w /dev/shm ] && findmnt -no FSTYPE,OPTIONS --target /dev/shm 2>/dev/null | \
  grep '^tmpfs ' | grep -qvw noexec && echo /dev/shm || echo /tmp)
PYTEST := TMPDIR=$(TEST_TMP) PKR_REQUIRE_MICROPYTHON=1 $(PY) -m pytest -n 5 --dist loadfile \
  --no-loadscope-reorder

compiled: $(STAMP) system-deps $(MICROPYTHON)
	-@$(PY) -m compileall -q -j 0 $(VENV)/lib contract controller firmware_bridge hardware \
	  houses store hub group simulators tablectl harness tests/*.py tests/bench >/dev/null
	-@$(PY) -m tests.assertion_cache

# The real MicroPython interpreter for the firmware's tests, its version pinned by the lock.
$(MICROPYTHON): tests/micropython/package-lock.json | system-deps
	cd tests/micropython && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Lint and types (6 s, one process) beside the byte-compilation (6 s, two), each target's
# output together (--output-sync); the tests once all three have passed.
test: $(STAMP) system-deps $(MICROPYTHON)
	@$(MAKE) --no-print-directory -j 3 --output-sync=target lint typecheck compiled
	$(PYTEST)

# The demo wants a broker: Mosquitto is installed with apt when missing; if that cannot be
# done the simulated tables keep their events in their local outboxes, and say so.
# Two tables, four hands each, seed 6 (misdeals, a void hand, exposed and premature cards, a
# missing burn): about 25 s of dealing, so that the demo ends within a minute of a fresh clone.
demo: $(RUNTIME_STAMP)
	@command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || \
	  { echo "installing mosquitto with apt"; ($(SUDO) apt-get update -q && \
	    $(SUDO) apt-get install -y -q mosquitto) || echo "no mosquitto: running without a broker"; }
	rm -rf .demo
	$(VENV)/bin/tablectl sim --tables 2 --hands 4 --seed 6 --irregularities 0.4 --profile corner-pocket \
	  --structure corner-pocket --dir .demo

# The table on emulated Raspberry Pi OS (bookworm arm64 and armhf roots, debootstrap and
# qemu-user-static from Debian's packages, as root): minutes, so not in make test.
pi-check:
	$(PYTHON) -m tests.pi_check

bench: $(STAMP)
	$(VENV)/bin/tablectl bench replay --hands 10000
	$(VENV)/bin/tablectl bench shoe
	$(VENV)/bin/tablectl bench display
	$(VENV)/bin/tablectl bench latency
	$(VENV)/bin/tablectl bench outage
	$(VENV)/bin/tablectl bench footprint
	$(VENV)/bin/tablectl bench venue --tables 200
	$(VENV)/bin/tablectl bench contract
	$(VENV)/bin/tablectl bench start

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .import_linter_cache .hypothesis .demo \
	  tests/micropython/node_modules build
