# Two commands on a fresh machine with only Python: `make demo` and `make test`.
PYTHON ?= python3
# minutes of `make soak` (every env, variant, bot kind and batched engine)
SOAK_MINUTES ?= 30
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

# the browser test (tests/test_web_browser.py) drives Debian's Chromium
CHROMIUM := /usr/bin/chromium

.PHONY: demo test test-slow lint docs bench soak clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(STAMP)

demo: $(STAMP)
	$(BIN)/parlour demo

# the default suite, then the installed wheel's commands (tests/test_wheel.py, a few
# minutes), then the docs site
test: $(DEV_STAMP) $(CHROMIUM)
	$(BIN)/python -m pytest -q -n auto --dist loadgroup
	$(BIN)/python -m pytest -q -m slow tests/test_wheel.py
	$(MAKE) docs

$(CHROMIUM):
	apt-get update && apt-get install -y chromium chromium-driver

test-slow: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadgroup -m slow

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

# the documentation site in site/ (mkdocs.yml); --strict: a broken link fails
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/env_speed.py

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py --minutes $(SOAK_MINUTES)

clean:
	rm -rf $(VENV) build dist site *.egg-info
