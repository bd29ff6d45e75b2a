# Two entry points: `make run` (serve the lectures; the server traces those whose traces are
# missing or stale once it is up) and `make test`. Each installs what it needs, saying so.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
LECTURES := lectures/lecture_01.py lectures/lecture_02.py lectures/example_basics.py lectures/example_i18n.py \
            lectures/example_distributed.py
TIKTOKEN_FIXTURE := $(abspath tests/fixtures/tiktoken-cache)
# Options for `serve` in make run, e.g. make run SERVE_OPTIONS="--port 8400 --no-browser".
SERVE_OPTIONS ?=
# Debian packages, installed by scripts/system-packages.sh when run as root (else it says how):
# libomp5, LLVM's OpenMP: the server's kernel keeps taking checkpoints after torch ran in parallel;
# chromium: the browser tests; fonts-noto-cjk: Chinese in the viewer and its screenshots;
# slurm-wlm, slurm-client, slurmdbd, munge, mariadb-server: the tests of `trace --executor slurm` on a
# one-machine cluster (scripts/slurm_cluster.py).
RUN_PACKAGES := libomp5
TEST_PACKAGES := libomp5 chromium fonts-noto-cjk slurm-wlm slurm-client slurmdbd munge mariadb-server

# GPT-2's tokenizer files for tiktoken, offline: the copy shipped with the tests (tests/fixtures/README.md).
ifneq ($(wildcard $(TIKTOKEN_FIXTURE)),)
export TIKTOKEN_CACHE_DIR ?= $(TIKTOKEN_FIXTURE)
endif

.PHONY: run test trace serve bench clean system-packages-run system-packages-test

system-packages-run:
	@scripts/system-packages.sh "make run" $(RUN_PACKAGES)

system-packages-test:
	@scripts/system-packages.sh "the tests" $(TEST_PACKAGES)

# The first run installs for a minute or so, each stage saying what it does. `make run` installs
# the package alone; `make test` adds the test tools (Playwright, Hypothesis, Jupyter's kernel, ...).
$(RUN_STAMP): pyproject.toml scripts/install-python-packages.sh
	@scripts/install-python-packages.sh $(VENV) $(PYTHON) .
	@touch $(RUN_STAMP)
	@echo "==> installed"

$(TEST_STAMP): pyproject.toml scripts/install-python-packages.sh
	@scripts/install-python-packages.sh $(VENV) $(PYTHON) ".[test]"
	@touch $(TEST_STAMP) $(RUN_STAMP)
	@echo "==> installed, with the test tools"

trace: $(RUN_STAMP)
	@echo "==> tracing the lectures (a few seconds each) ..."
	$(BIN)/cs336-lectures trace $(LECTURES) -o var/traces

# No tracing first: the server prints its URL at once and traces what is stale in the background
# (the list of lectures shows those as running, and each appears when its trace is written).
run: system-packages-run $(RUN_STAMP)
	@echo "==> starting the viewer's server: open the URL it prints below (Ctrl-C stops it)"
	$(BIN)/cs336-lectures serve $(LECTURES) $(SERVE_OPTIONS)

test: system-packages-test $(TEST_STAMP)
	$(BIN)/python -m pytest -q

bench: $(TEST_STAMP)
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
