"""Fixtures shared by the whole suite: the seed fixtures folder, the trace schema, a browser."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "fixtures"
SCHEMA_PATH = ROOT / "trace" / "schema.json"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

if (FIXTURES / "tiktoken-cache").is_dir():
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(FIXTURES / "tiktoken-cache"))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """../shared/fixtures; tests that need it are skipped, with the reason, when it is absent."""
    if not FIXTURES.is_dir():
        pytest.skip(f"seed fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def gpt2_cache(fixtures_dir: Path) -> Path:
    """The tiktoken cache holding GPT-2's encoder.json and vocab.bpe."""
    return fixtures_dir / "tiktoken-cache"


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
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
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
