"""A site laid out as `cs336-lectures build` lays it out (the viewer's index.html, css/, js/,
traces/index.json, traces/*.json) in a temporary folder, and a static HTTP server over it.

The viewer's tests get these as fixtures (tests/viewer/conftest.py: `serve_site`,
`serve_module_site`); tests elsewhere that open the viewer import them from here.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VIEWER = ROOT / "viewer"
# For page.evaluate on any page of the site: what the viewer's Trace model (js/trace.js) does
# from each sampled step: its moves, and the step where each name in scope got its value.
TRACE_MOVES = """async ({data, samples}) => {
  const { Trace } = await import('./js/trace.js');
  const trace = new Trace(data);
  return samples.map((s) => ({
    step: s, next: trace.next(s), previous: trace.previous(s),
    over: trace.stepOver(s, 1), overBack: trace.stepOver(s, -1), out: trace.stepOut(s),
    env: Object.fromEntries(Array.from(trace.environment(s), ([name, entry]) => [name, entry.step])),
  }));
}"""


def index_entry(name: str, trace: dict) -> dict:
    header = trace["header"]
    entry = {"name": name, "file": f"{name}.json", "title": header["title"], "num_steps": header["num_steps"],
             "created": header["created"], "status": header["status"]}
    if "message" in header:
        entry["message"] = header["message"]
    return entry


def write_site(root: Path, traces: dict[str, dict | str], assets: Path | None = None) -> Path:
    """Lay out a site in root: the viewer's files, traces/<name>.json, traces/index.json and,
    from `assets`, traces/assets/. A trace given as a str is written verbatim (to test broken
    files) and left out of the index."""
    shutil.copytree(VIEWER, root, dirs_exist_ok=True)
    folder = root / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    if assets is not None and assets.is_dir():
        shutil.copytree(assets, folder / "assets", dirs_exist_ok=True)
    entries = []
    for name, trace in traces.items():
        if isinstance(trace, str):
            (folder / f"{name}.json").write_text(trace)
            continue
        (folder / f"{name}.json").write_text(json.dumps(trace))
        entries.append(index_entry(name, trace))
    (folder / "index.json").write_text(json.dumps({"traces": entries}))
    return root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class StaticSite:
    """Serve `root` on 127.0.0.1 from a thread: `with StaticSite(root) as site: page.goto(site.url)`.
    `url` ends in "/"; `root` and `traces` are the folders, for a test that changes a file the
    open page reads."""

    def __init__(self, root: Path):
        self.root = root
        self.traces = root / "traces"
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "StaticSite":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
