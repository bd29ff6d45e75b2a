# Two entry points: `make run` (trace the lectures, serve the viewer) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LECTURES := lectures/lecture_01.py lectures/lecture_02.py lectures/example_basics.py
TIKTOKEN_FIXTURE := $(abspath tests/fixtures/tiktoken-cache)

# GPT-2's tokenizer files for tiktoken, offline: the copy shipped with the tests (tests/fixtures/README.md).
ifneq ($(wildcard $(TIKTOKEN_FIXTURE)),)
export TIKTOKEN_CACHE_DIR ?= $(TIKTOKEN_FIXTURE)
endif

.PHONY: run test trace serve bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# The CPU build first: an unpinned torch would pull the multi-GB CUDA build.
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

trace: $(STAMP)
	$(BIN)/cs336-lectures trace $(LECTURES) -o var/traces

run: trace
	$(BIN)/cs336-lectures serve $(LECTURES)

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf var site
