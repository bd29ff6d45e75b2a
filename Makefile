# Two entry points: `make run` (trace the lectures, serve the viewer) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LECTURES := lectures/lecture_01.py lectures/lecture_02.py lectures/example_basics.py lectures/example_i18n.py \
            lectures/example_distributed.py
TIKTOKEN_FIXTURE := $(abspath tests/fixtures/tiktoken-cache)

# GPT-2's tokenizer files for tiktoken, offline: the copy shipped with the tests (tests/fixtures/README.md).
ifneq ($(wildcard $(TIKTOKEN_FIXTURE)),)
export TIKTOKEN_CACHE_DIR ?= $(TIKTOKEN_FIXTURE)
endif

.PHONY: run test trace serve bench clean

# The first run installs for a minute or two: each stage says what it does, pip shows its progress.
$(STAMP): pyproject.toml
	@echo "==> [1/3] creating the virtual environment in $(VENV) ..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] installing torch, CPU build (about a minute) ..."
	@# The CPU build first: an unpinned torch would pull the multi-GB CUDA build.
	@$(BIN)/pip install --disable-pip-version-check --progress-bar on "torch==2.13.0"
	@echo "==> [3/3] installing cs336-lectures and its other dependencies ..."
	@$(BIN)/pip install --disable-pip-version-check --progress-bar on -e ".[test]"
	@touch $(STAMP)
	@echo "==> installed"

trace: $(STAMP)
	@echo "==> tracing the lectures (a few seconds each) ..."
	$(BIN)/cs336-lectures trace $(LECTURES) -o var/traces

run: trace
	@echo "==> starting the viewer's server: open the URL it prints below (Ctrl-C stops it)"
	$(BIN)/cs336-lectures serve $(LECTURES)

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf var site

# Mutation testing (not part of `make test` nor of CI: tens of minutes on two cores). The modules,
# their tests, the sanitiser's mutants and the eleven bugs issue 25 planted are listed in tests/mutation/;
# MUTATION=edits runs one mutmut target.
.PHONY: mutation
mutation: $(STAMP)
	$(BIN)/python -c "import mutmut" 2>/dev/null || $(BIN)/pip install --disable-pip-version-check -e ".[mutation]"
	nice -n 10 $(BIN)/python tests/mutation/run_mutmut.py $(MUTATION)
	nice -n 10 $(BIN)/python tests/mutation/js_mutants.py
	nice -n 10 $(BIN)/python tests/mutation/planted_bugs.py
