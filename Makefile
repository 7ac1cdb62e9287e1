# cnsim: build, demo and tests.
#
#   make demo   build everything in .venv and run study A (baseline): no_cm vs pause
#   make test   build everything and run the Rust and Python test suites;
#               installs Debian's chromium and chromium-driver (apt-get, sudo
#               when not root) for the report test unless BROWSER=0
#
# The virtualenv and the release build of the extension are made once; later
# runs only rebuild what changed (the stamps below track pyproject.toml and
# every file under crates/).

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PIP     := $(BIN)/python -m pip
CNSIM   := $(BIN)/cnsim
RESULTS := results/baseline

RUST_SOURCES := Cargo.toml Cargo.lock $(shell find crates -type f -not -path '*/target/*' 2>/dev/null)

.PHONY: all demo test build test-rust test-python browser clean FORCE

all: build

# --- environment -----------------------------------------------------------

$(VENV)/.stamp-venv:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip "maturin>=1.7,<2"
	touch $@

# Builds the extension in the cargo profile PROFILE (release) and installs
# the package (editable, with its dependencies) into .venv; maturin/cargo
# rebuild incrementally. With PGO=1 (the default) the engine is first
# profiled on the training set of scripts/pgo_profile.sh and compiled with
# that profile (same results, about 10% faster); without an llvm-profdata it
# builds without one. PGO=0 skips the profile.
PGO      ?= 1
PROFILE  ?= release
PROFDATA := $(CURDIR)/target/pgo/cnsim.profdata

# The tests build in the release-tests profile (Cargo.toml: release
# optimisation, quick to build) without PGO, which changes speed, not
# results; the extension and the Rust tests then share one build of the
# dependencies. Switching between `make test` and `make demo` rebuilds the
# extension.
test test-rust test-python: PGO = 0
test test-rust test-python: PROFILE = release-tests

# Records the build settings, rewritten only when they change, so that
# changing them rebuilds the extension.
$(VENV)/.build-setting: FORCE
	@mkdir -p $(VENV); echo "PGO=$(PGO) PROFILE=$(PROFILE)" | cmp -s - $@ || echo "PGO=$(PGO) PROFILE=$(PROFILE)" > $@

$(VENV)/.stamp-build: $(VENV)/.stamp-venv $(VENV)/.build-setting pyproject.toml $(RUST_SOURCES) scripts/pgo_profile.sh
	@flags=""; \
	if [ "$(PGO)" = 1 ]; then \
		rc=0; bash scripts/pgo_profile.sh $(PROFDATA) || rc=$$?; \
		if [ $$rc = 0 ]; then flags="-Cprofile-use=$(PROFDATA)"; elif [ $$rc != 3 ]; then exit $$rc; fi; \
	fi; \
	echo "maturin develop --profile $(PROFILE) $${flags:+(RUSTFLAGS=$$flags)}"; \
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH RUSTFLAGS="$$flags" PIP_QUIET=1 \
		$(BIN)/maturin develop --profile $(PROFILE)
	touch $@

# Test-only dependencies: the [project.optional-dependencies] test list.
$(VENV)/.stamp-test-deps: $(VENV)/.stamp-venv pyproject.toml
	$(PIP) install --quiet $$($(BIN)/python -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]))')
	touch $@

build: $(VENV)/.stamp-build

# --- demo: study A, no congestion management vs PAUSE -----------------------

# --force: the demo replaces its own earlier output (never files cnsim did
# not write; docs/output-and-safety.md).
demo: build
	$(CNSIM) run scenarios/baseline/no_cm.toml --out $(RESULTS)/no_cm --plot --force
	$(CNSIM) run scenarios/baseline/pause.toml --out $(RESULTS)/pause --plot --force
	$(CNSIM) plot $(RESULTS)/no_cm $(RESULTS)/pause --out $(RESULTS)/compare --force
	@echo
	@echo "Summaries:  $(RESULTS)/no_cm/summary.json  $(RESULTS)/pause/summary.json"
	@echo "Tables:     $(RESULTS)/<variant>/*.parquet"
	@echo "Figures:    $(RESULTS)/no_cm/figures/  $(RESULTS)/pause/figures/"
	@echo "Comparison: $(RESULTS)/compare/ (one figure per view: README.md, Figures)"

# --- tests -----------------------------------------------------------------

test: test-rust test-python

# Runs after the extension build, in its profile, and reuses maturin's PyO3
# configuration file when there is one, so cargo and maturin do not rebuild
# pyo3 for each other. The cdylib crate builds and links fine under cargo
# test.
test-rust: build
	cfg=$$(ls $(CURDIR)/target/maturin/pyo3-config-*.txt 2>/dev/null | head -n 1); \
	env $${cfg:+PYO3_CONFIG_FILE=$$cfg} cargo test --workspace --profile $(PROFILE)
	# Fingerprints must not depend on the build profile: the stored ones, from a debug build too
	# (the points of up to 6 M events: study F's fabric points take minutes each in a debug build).
	CNSIM_FINGERPRINT_MAX_EVENTS=6000000 cargo test -p cnsim-core --test fingerprints
	# The partition statistics (docs/parallel.md) exist only with their feature.
	cargo test -p cnsim-core --profile $(PROFILE) --features partition-stats --test partition_stats

# BROWSER=0: no Chromium install; the report's browser test is then skipped
# when Chromium is missing (CNSIM_SKIP_BROWSER).
BROWSER ?= 1

# The Python tests run on one worker per CPU (pytest-xdist): each test is
# one process's work, and the suite takes about 40% less time on two cores.
# PYTEST_WORKERS=0 runs them in this process.
PYTEST_WORKERS ?= auto

test-python: build $(VENV)/.stamp-test-deps browser
	$(if $(filter 0,$(BROWSER)),CNSIM_SKIP_BROWSER=1) $(BIN)/pytest -q -n $(PYTEST_WORKERS) tests

# Headless Chromium and its driver (Debian packages) for the report test.
browser:
	@if [ "$(BROWSER)" = 0 ]; then :; elif command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; else \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "installing chromium and chromium-driver (Debian packages)"; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

clean:
	rm -rf $(VENV) results python/cnsim/_core*.so
