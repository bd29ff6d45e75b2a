"""The viewer's tests drive real Chromium (the `browser` and `page` fixtures of tests/conftest.py):
each is marked `browser`, so `pytest -m "not browser"` runs the rest of the suite alone."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)
