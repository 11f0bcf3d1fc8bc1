# EquiMind — the two set-up commands are `make demo` and `make test`; both install into .venv if needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
SHARED ?= $(or $(EQUIMIND_SHARED),../shared)
SNAPSHOT ?=
TICKER ?= NVDA
QUESTION ?= Should I invest in NVIDIA?

.PHONY: install test demo bench lint eval clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# Two pytest-xdist workers (one a core), each taking whole test files (--dist loadfile: a file's module fixtures are
# built once, on one worker). TEST_WORKERS=0 runs the suite in this one process.
TEST_WORKERS ?= 2
test: install
	EQUIMIND_SHARED=$(SHARED) $(BIN)/python -m pytest -q --durations=25 -n $(TEST_WORKERS) --dist loadfile

demo: install
	EQUIMIND_SHARED=$(SHARED) SNAPSHOT=$(SNAPSHOT) TICKER=$(TICKER) QUESTION="$(QUESTION)" bash scripts/demo.sh

bench: install
	EQUIMIND_SHARED=$(SHARED) $(BIN)/python -m benchmarks.run_all

lint: install
	$(BIN)/ruff check equimind tests benchmarks
	$(BIN)/mypy equimind

eval: install
	EQUIMIND_SHARED=$(SHARED) $(BIN)/equimind eval all

clean:
	rm -rf .equimind_cache
