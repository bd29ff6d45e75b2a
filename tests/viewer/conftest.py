"""The viewer's tests drive real Chromium (the `browser` and `page` fixtures of tests/conftest.py):
each is marked `browser`, so `pytest -m "not browser"` runs the rest of the suite alone.

The fixtures here serve what the browser opens, on 127.0.0.1, and stop it afterwards: a static
site (the viewer's files and the given traces, in a fresh temporary folder laid out by
tests/static_site.py) or the live server over a lecture.

- `serve_site(traces=None, assets=None)` -> `StaticSite`: called in a test, as often as it
  needs. `traces` maps a name to a trace dict (listed in traces/index.json) or to a str (written
  verbatim, left out of the index: a broken file); none serves the viewer alone, for a page
  that loads a trace itself. `assets` is a folder copied to traces/assets/. The site's `url`
  ends in "/" (`page.goto(site.url + "index.html?trace=demo")`); `site.root` is its folder and
  `site.traces` its folder of trace files. Every server stops when the test ends.
- `serve_module_site`: the same, for a module fixture that serves one site to every test of a file
  (`return serve_module_site({"demo": demo_trace()})`); its servers stop after the module.
- `serve_live(source=LECTURE, fails=False, folder=None)` -> `LiveServer` (live_server.py): the
  real `cs336-lectures serve` over `source` written as live_lecture.py in `folder` (by default a
  fresh one), returned once its first run has written the trace (or, with `fails`, has failed).
  `server.url` carries the token; `server.lecture` and `server.trace` are the files. It is
  stopped with Ctrl-C when the test ends; `serve_module_live` is its module-scoped counterpart.

The traces are built by hand with tests/trace_builders.py (TraceBuilder, markdown, tensor,
line_of, and the standard demo_trace, error_trace, multiline_trace). They stay plain functions,
not fixtures: tests parametrize over them and read their steps at import time, and the tests of
other layers import them too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from live_server import LECTURE, LiveServer
from static_site import StaticSite, write_site

HERE = Path(__file__).resolve().parent

ServeSite = Callable[..., StaticSite]
ServeLive = Callable[..., LiveServer]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@contextlib.contextmanager
def site_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSite]:
    """A function that writes and serves a new site at each call; the servers stop on exit."""
    with contextlib.ExitStack() as running:
        def serve(traces: dict[str, dict | str] | None = None, assets: Path | None = None) -> StaticSite:
            root = write_site(tmp_path_factory.mktemp("site"), traces or {}, assets)
            return running.enter_context(StaticSite(root))

        yield serve


@pytest.fixture
def serve_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSite]:
    with site_servers(tmp_path_factory) as serve:
        yield serve


@pytest.fixture(scope="module")
def serve_module_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeSite]:
    with site_servers(tmp_path_factory) as serve:
        yield serve


@contextlib.contextmanager
def live_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeLive]:
    """A function that starts a new `cs336-lectures serve` at each call; all stop on exit."""
    with contextlib.ExitStack() as running:
        def serve(source: str = LECTURE, fails: bool = False, folder: Path | None = None) -> LiveServer:
            server = LiveServer(folder or tmp_path_factory.mktemp("live"), source, fails)
            running.callback(server.close)
            return server

        yield serve


@pytest.fixture
def serve_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeLive]:
    with live_servers(tmp_path_factory) as serve:
        yield serve


@pytest.fixture(scope="module")
def serve_module_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeLive]:
    with live_servers(tmp_path_factory) as serve:
        yield serve
