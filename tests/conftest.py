"""Fixtures shared by the whole suite: the tokenizer texts and GPT-2 files, the trace schema, a browser."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
# The tests mirror the package in folders (content/, runtime/<layer>/, viewer/, lectures/); a
# test module may import helpers from another by name (`from test_server import serve`) and
# from the modules beside this file (trace_builders, static_site), wherever it runs from.
sys.path[:0] = [str(TESTS), *sorted(str(folder) for folder in TESTS.rglob("*")
                                    if folder.is_dir() and any(folder.glob("test_*.py")))]
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures"
BUNDLED = ROOT / "tests" / "fixtures"  # shipped with the project: a clone without ../shared runs every test
GPT2_CACHE = BUNDLED / "tiktoken-cache"
SCHEMA_PATH = ROOT / "trace" / "schema.json"
# Debian's Chromium; elsewhere (macOS: Homebrew's cask) the one CHROMIUM names, else on PATH.
CHROMIUM = os.environ.get("CHROMIUM") or next(
    (path for path in ("/usr/bin/chromium", "/Applications/Chromium.app/Contents/MacOS/Chromium") if Path(path).exists()),
    shutil.which("chromium") or "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# GPT-2's tokenizer for tiktoken, offline; subprocesses (the traced lectures) inherit it.
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(GPT2_CACHE))

STAND_INS = {  # a seed fixture's name -> our own text in tests/fixtures/texts standing in for it
    "tinystories_sample.txt": "story.txt",
    "address.txt": "speech.txt",
    "german.txt": "german.txt",
}
CORPUS_CHARACTERS = 130_000  # as much English as the seed's corpus.en


@pytest.fixture(scope="session")
def fixtures_dir(tmp_path_factory) -> Path:
    """The texts the tokenizer tests read: ../shared/fixtures when it is there; otherwise stand-ins
    under the same names, from our own texts and, for corpus.en, the prose of the standard library's
    pydoc topics (every Python has it). The course's reference merges exist only in ../shared;
    tests check the trainer against an independent definition without them."""
    if FIXTURES.is_dir():
        return FIXTURES
    folder = tmp_path_factory.mktemp("fixtures")
    for name, ours in STAND_INS.items():
        shutil.copyfile(BUNDLED / "texts" / ours, folder / name)
    from pydoc_data.topics import topics

    prose = "".join(topics[name] for name in sorted(topics))
    (folder / "corpus.en").write_text(prose[:CORPUS_CHARACTERS], encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def gpt2_cache() -> Path:
    """The tiktoken cache holding GPT-2's encoder.json and vocab.bpe (tests/fixtures/README.md)."""
    return GPT2_CACHE


@pytest.fixture(scope="session")
def validate_trace():
    """validate_trace(obj_or_path): raise jsonschema.ValidationError unless it follows trace/schema.json."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    validator = jsonschema.Draft202012Validator(schema)

    def validate(trace: dict | str | Path) -> dict:
        if not isinstance(trace, dict):
            trace = json.loads(Path(trace).read_text())
        validator.validate(trace)
        return trace

    return validate


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never a downloaded browser).

    Module-scoped: Playwright's sync API keeps an event loop running in this thread while it
    is open, which would break tests that trace a lecture with `async def main` in-process.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium; macOS: brew install --cask chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    # Playwright evaluates wait_for_function's predicates with eval, which the viewer's own
    # Content-Security-Policy forbids; tests of that policy (test_faults_web.py) open their own context.
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    yield page
    context.close()


def pytest_terminal_summary(terminalreporter) -> None:
    """At the end of every run, the skipped tests counted by reason, so that a skip never goes
    unnoticed (on a machine with everything installed, only tests that need a GPU skip)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if not reasons:
        return
    terminalreporter.section(f"skipped: {sum(reasons.values())} tests, by reason")
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        terminalreporter.write_line(f"{count:4d}  {reason}")
