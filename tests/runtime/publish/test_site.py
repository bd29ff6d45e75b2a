"""The site index and `cs336-lectures build`: layout, relative paths, broken traces, atomic replace."""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import re
import threading
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from cs336_lectures.runtime.publish import site
ASSET = "assets/0123456789abcdef.svg"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>'


def sample_trace(title: str = "lecture_x", status: str = "ok", lines: int = 3, asset: str | None = None) -> dict:
    """A small, schema-valid trace: `lines` steps through one file, optionally showing a plot asset."""
    source = "\n".join(f"x{i} = {i}" for i in range(lines)) + "\n"
    steps: list[list] = [[0, line] for line in range(1, lines + 1)]
    if asset:
        steps[0].append({"r": [{"type": "plot", "src": asset, "alt": "a plot"}]})
    header = {
        "title": title, "source": f"lectures/{title}.py", "entry": "<module>", "created": "2026-01-01T00:00:00Z",
        "elapsed_s": 0.01, "python": "3.11", "torch": "2", "platform": "test", "device": "cpu",
        "command": ["cs336-lectures", "trace"], "seed": 0, "status": status, "num_steps": len(steps),
    }
    if status != "ok":
        header["message"] = f"stopped: {status}"
    return {
        "format": "cs336-lectures-trace", "version": 1, "header": header,
        "files": [{"path": f"lectures/{title}.py", "source": source, "html": source.splitlines(), "hidden": []}],
        "functions": [[0, "<module>", 1]], "calls": [[0, -1]], "steps": steps,
    }


def write_trace_dir(folder: Path, traces: dict[str, dict]) -> Path:
    (folder / "assets").mkdir(parents=True, exist_ok=True)
    (folder / ASSET).write_bytes(SVG)
    for name, trace in traces.items():
        (folder / f"{name}.json").write_text(json.dumps(trace))
    return folder


def fake_viewer(folder: Path) -> Path:
    (folder / "css").mkdir(parents=True)
    (folder / "js").mkdir()
    (folder / "index.html").write_text(
        '<!doctype html><link rel="stylesheet" href="css/viewer.css"><script type="module" src="js/main.js"></script>')
    (folder / "css" / "viewer.css").write_text("body { margin: 0 }")
    (folder / "js" / "main.js").write_text("fetch('traces/index.json');")
    return folder


def build_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    site.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_sample_trace_follows_the_schema(validate_trace):
    validate_trace(sample_trace(asset=ASSET))
    validate_trace(sample_trace(status="error"))


def test_index_lists_traces_from_their_headers(tmp_path):
    traces = write_trace_dir(tmp_path, {"b_lecture": sample_trace("b_lecture", lines=5),
                                        "a_lecture": sample_trace("a_lecture", status="timeout")})
    (traces / ".a_lecture.json.123.tmp").write_text("{")  # a trace being written: not listed
    index = site.build_index(traces)
    assert [entry["name"] for entry in index["traces"]] == ["a_lecture", "b_lecture"]
    a, b = index["traces"]
    assert a == {"name": "a_lecture", "file": "a_lecture.json", "title": "a_lecture", "num_steps": 3,
                 "created": "2026-01-01T00:00:00Z", "status": "timeout", "message": "stopped: timeout"}
    assert b["num_steps"] == 5 and b["status"] == "ok" and "message" not in b


def test_index_puts_a_section_after_its_whole_lecture(tmp_path):
    names = ["lecture_01", "lecture_01.bpe_training", "lecture_02"]
    traces = write_trace_dir(tmp_path, {name: sample_trace(name) for name in names})
    assert [entry["name"] for entry in site.build_index(traces)["traces"]] == names


def test_index_reads_headers_that_do_not_come_first(tmp_path):
    trace = sample_trace("late", lines=4)
    reordered = {"steps": trace["steps"], "files": trace["files"], **trace}
    (tmp_path / "late.json").write_text(json.dumps(reordered))
    assert site.build_index(tmp_path)["traces"][0]["num_steps"] == 4


def test_index_lists_broken_traces_with_the_reason(tmp_path):
    good = json.dumps(sample_trace("good"))
    (tmp_path / "good.json").write_text(good)
    (tmp_path / "truncated.json").write_text(good[: len(good) // 2])
    long_steps = json.dumps(sample_trace("cut", lines=5000))
    (tmp_path / "cut.json").write_text(long_steps[: len(long_steps) - 10])  # the header is intact
    (tmp_path / "future.json").write_text(json.dumps({**sample_trace("future"), "version": 99}))
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    entries = {entry["name"]: entry for entry in site.build_index(tmp_path)["traces"]}
    assert entries["good"]["status"] == "ok"
    assert entries["truncated"]["status"] == "invalid" and "not valid JSON" in entries["truncated"]["message"]
    assert entries["cut"]["status"] == "invalid" and "truncated" in entries["cut"]["message"]
    assert entries["future"]["status"] == "invalid" and "version 99" in entries["future"]["message"]
    assert entries["other"]["status"] == "invalid" and "something-else" in entries["other"]["message"]


def test_index_notices_a_rewritten_trace(tmp_path):
    path = tmp_path / "lecture.json"
    path.write_text(json.dumps(sample_trace("lecture", lines=2)))
    assert site.build_index(tmp_path)["traces"][0]["num_steps"] == 2
    path.write_text(json.dumps(sample_trace("lecture", lines=7)))
    assert site.build_index(tmp_path)["traces"][0]["num_steps"] == 7


def test_index_of_a_missing_folder_is_empty(tmp_path):
    assert site.build_index(tmp_path / "nowhere") == {"traces": []}


def test_build_writes_viewer_index_traces_and_only_referenced_assets(tmp_path):
    traces = write_trace_dir(tmp_path / "traces", {"one": sample_trace("one", asset=ASSET), "two": sample_trace("two")})
    (traces / "assets" / "ffffffffffffffff.png").write_bytes(b"unused")
    out = tmp_path / "site"
    index = site.write_site([traces / "one.json", traces / "two.json"], out, viewer_dir=fake_viewer(tmp_path / "viewer"))
    assert sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()) == [
        "css/viewer.css", "index.html", "js/main.js",
        "traces/assets/0123456789abcdef.svg", "traces/index.json", "traces/one.json", "traces/two.json",
    ]
    assert json.loads((out / "traces" / "index.json").read_text()) == index
    assert [entry["file"] for entry in index["traces"]] == ["one.json", "two.json"]
    assert (out / "traces" / ASSET).read_bytes() == SVG
    assert json.loads((out / "traces" / "one.json").read_text()) == sample_trace("one", asset=ASSET)


def test_build_replaces_an_earlier_build_whole(tmp_path):
    traces = write_trace_dir(tmp_path / "traces", {"one": sample_trace("one"), "two": sample_trace("two")})
    viewer = fake_viewer(tmp_path / "viewer")
    out = tmp_path / "site"
    site.write_site([traces / "one.json", traces / "two.json"], out, viewer_dir=viewer)
    site.write_site([traces / "two.json"], out, viewer_dir=viewer)
    assert not (out / "traces" / "one.json").exists()
    assert [entry["name"] for entry in site.build_index(out / "traces")["traces"]] == ["two"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["site", "traces", "viewer"]  # no leftovers


def test_build_refuses_bad_input_and_keeps_the_old_site(tmp_path, capsys):
    traces = write_trace_dir(tmp_path / "traces", {"one": sample_trace("one")})
    (traces / "broken.json").write_text('{"format": "cs336-lectures-trace", "version": 1, "hea')
    viewer = fake_viewer(tmp_path / "viewer")
    out = tmp_path / "site"
    site.write_site([traces / "one.json"], out, viewer_dir=viewer)
    for bad in (traces / "broken.json", traces / "missing.json"):
        with pytest.raises(site.SiteError, match=re.escape(str(bad))):
            site.write_site([traces / "one.json", bad], out, viewer_dir=viewer)
    assert (out / "traces" / "one.json").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["site", "traces", "viewer"]


def test_build_refuses_to_replace_a_folder_that_is_not_a_site(tmp_path):
    traces = write_trace_dir(tmp_path / "traces", {"one": sample_trace("one")})
    project = tmp_path / "project"
    project.mkdir()
    (project / "precious.txt").write_text("keep me")
    with pytest.raises(site.SiteError, match="not an earlier site build"):
        site.write_site([traces / "one.json"], project, viewer_dir=fake_viewer(tmp_path / "viewer"))
    assert (project / "precious.txt").read_text() == "keep me"


def test_build_command_reports_errors_with_exit_status_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert site.run(build_args("missing.json", "--out", "site")) == 2
    assert "missing.json: no such trace file" in capsys.readouterr().err
    assert site.run(build_args("--out", "site")) == 2  # no var/traces here
    assert "no traces in var/traces" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()


def test_build_command_defaults_to_var_traces_and_serves_statically(tmp_path, monkeypatch, capsys):
    """The real viewer plus traces, served by a plain static file server, with relative URLs only."""
    monkeypatch.chdir(tmp_path)
    write_trace_dir(tmp_path / "var" / "traces", {"lecture_a": sample_trace("lecture_a", asset=ASSET)})
    assert site.run(build_args("--out", "public")) == 0
    assert "public/index.html" in capsys.readouterr().out
    out = tmp_path / "public"
    entry = (out / "index.html").read_text()
    for url in re.findall(r'(?:src|href)="([^"]+)"', entry):
        assert not url.startswith(("/", "http:", "https:")), f"index.html refers to {url}: not relative"
        path = url.split("?")[0].split("#")[0]
        if path and not url.startswith("data:"):
            assert (out / path).is_file(), f"index.html refers to missing {url}"

    with static_server(out) as base:
        def get(path: str) -> bytes:
            with urllib.request.urlopen(base + path, timeout=10) as response:
                return response.read()

        assert b"<script" in get("index.html")
        index = json.loads(get("traces/index.json"))
        trace = json.loads(get("traces/" + index["traces"][0]["file"]))
        plot = trace["steps"][0][2]["r"][0]["src"]
        assert get("traces/" + plot) == SVG


@pytest.mark.browser
def test_exported_site_works_from_a_subfolder_of_a_static_host(tmp_path, page):
    traces = write_trace_dir(tmp_path / "traces", {"lecture_a": sample_trace("lecture_a", lines=4, asset=ASSET)})
    site.write_site([traces / "lecture_a.json"], tmp_path / "host" / "course" / "site")
    with static_server(tmp_path / "host") as base:
        page.goto(base + "course/site/index.html")
        page.locator("a[data-trace=lecture_a]").click()
        page.locator(".code .line.current").wait_for(state="attached")
        assert "trace=lecture_a" in page.evaluate("location.href")
        assert page.locator(".code .line").count() == 4
        assert page.locator(".cs336-live-edit").count() == 0  # no server: no editing


@pytest.mark.browser
def test_exported_site_opened_as_a_file_says_to_serve_it(tmp_path, page):
    """Browsers run no JavaScript modules in a file:// page; the site says so instead of staying blank."""
    traces = write_trace_dir(tmp_path / "traces", {"lecture_a": sample_trace("lecture_a", lines=4)})
    site.write_site([traces / "lecture_a.json"], tmp_path / "site")
    page.goto((tmp_path / "site" / "index.html").as_uri())
    expect(page.locator("#no-modules")).to_be_visible()
    assert "python3 -m http.server" in page.locator("#no-modules").inner_text()
    with static_server(tmp_path / "site") as base:
        page.goto(base + "index.html")
        page.locator("a[data-trace=lecture_a]").wait_for()
        assert page.locator("#no-modules").count() == 0


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:
        pass


@contextlib.contextmanager
def static_server(folder: Path):
    """A plain static file server over `folder`, as any static host would be; yields its base URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as static:
        threading.Thread(target=static.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{static.server_address[1]}/"
        finally:
            static.shutdown()
