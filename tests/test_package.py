"""The package as a lecturer of another course gets it: a wheel built from an sdist of this
repository, installed into a fresh virtual environment outside the clone, then `new`, `trace`,
`build` and `serve` run from a folder of their own, and a browser opening the served lecture.

Nothing is downloaded: the wheel is built without build isolation (setuptools is here) and
installed with --no-deps; its dependencies (torch, ...) come from this test run's environment,
whose site-packages the new environment reads through a .pth file (what --system-site-packages
would do if this environment were the system's). The package itself must come from the wheel.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=\S+")
SHARED_FILES = ("viewer/index.html", "viewer/js/main.js", "viewer/css/viewer.css", "trace/schema.json", "trace/README.md")
HELPER_LECTURE = '''"""Helpers: a lecture that imports a module beside it and shows an image beside it."""

from cs336_lectures import image, text
from helpers import doubled


def main():
    text("# Helpers")
    four = doubled(2)  # @inspect four
    image("figures/dot.png", width=40)
'''
HELPERS = "def doubled(x):\n    return 2 * x\n"
# A 1x1 PNG.
DOT_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5d3"
                        "b1e10000000049454e44ae426082")

pytestmark = [pytest.mark.slow]


def run(command: list, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=600)
    if check:
        assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result


def source_tree(into: Path) -> Path:
    """A copy of the repository's files as a clone holds them (tracked, or new and not ignored)."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], ROOT).stdout
    for relative in filter(None, listed.split("\0")):
        source = ROOT / relative
        if source.is_file():
            (into / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / relative)
    return into


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """An sdist of the repository, and the wheel built from that sdist (as `python -m build` does)."""
    work = tmp_path_factory.mktemp("dist")
    source = source_tree(work / "source")
    out = work / "out"
    run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(out)!r})"], source)
    sdist = next(out.glob("*.tar.gz"))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", out, sdist], work)
    return {"sdist": sdist, "wheel": next(out.glob("*.whl"))}


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> Path:
    """The bin/ folder of a fresh virtual environment, outside the clone, holding the wheel."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    run([sys.executable, "-m", "venv", "--without-pip", venv], venv.parent)
    site_packages = Path(run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             venv.parent).stdout.strip())
    (site_packages / "test-run-packages.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps", "--no-index", "-q",
         dist["wheel"]], venv.parent)
    return venv / "bin"


def test_a_clone_finds_its_own_viewer_and_schema():
    from cs336_lectures.resources import TRACE_SCHEMA, VIEWER_DIR

    assert (VIEWER_DIR, TRACE_SCHEMA) == (ROOT / "viewer", ROOT / "trace" / "schema.json")


def test_the_wheel_and_the_sdist_carry_the_viewer_and_the_trace_contract(dist):
    wheel_names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    for relative in SHARED_FILES:
        assert f"cs336_lectures/share/{relative}" in wheel_names
    viewer = {path.relative_to(ROOT).as_posix() for path in (ROOT / "viewer").rglob("*")
              if path.is_file() and not any(part.startswith(".") for part in path.parts)}
    assert {f"cs336_lectures/share/{name}" for name in viewer} <= wheel_names  # vendor/ too, once there
    with tarfile.open(dist["sdist"]) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        sdist_names = set(sdist.getnames())
    for relative in (*SHARED_FILES, "build_hooks.py", "pyproject.toml"):
        assert f"{top}/{relative}" in sdist_names
    assert not any("/share/" in name for name in sdist_names)  # mapped at build time, not kept in the tree


def test_a_lecturer_starts_traces_builds_and_serves_outside_the_clone(installed, tmp_path, page):
    cli = installed / "cs336-lectures"
    course = tmp_path / "course"
    course.mkdir()
    where = run([installed / "python", "-c", "import cs336_lectures; print(cs336_lectures.__file__)"], course).stdout
    assert where.startswith(str(installed.parent)), where  # the wheel's copy, not the clone
    version = run([cli, "--version"], course).stdout
    assert version == run([installed / "python", "-m", "cs336_lectures", "--version"], course).stdout
    assert version.startswith("cs336-lectures ")

    run([cli, "new", "first_lecture.py", "--lang", "ru,zh"], course)
    assert (course / "locales" / "zh" / "first_lecture.yaml").is_file()
    run([cli, "trace", "first_lecture.py"], course)
    trace = json.loads((course / "var" / "traces" / "first_lecture.json").read_text())
    found = run([installed / "python", "-c", "from cs336_lectures import resources as r; print(r.VIEWER_DIR, r.TRACE_SCHEMA)"],
                course).stdout.split()
    assert all(path.startswith(str(installed.parent)) for path in found), found  # the package's copies
    jsonschema.Draft202012Validator(json.loads(Path(found[1]).read_text())).validate(trace)
    assert trace["header"]["status"] == "ok" and trace["header"]["cs336_lectures"] == version.split()[1]

    # A lecture in another folder, traced from elsewhere: its helper module and image are found
    # beside it, and its trace lands in var/traces/ beside it.
    (course / "extra" / "figures").mkdir(parents=True)
    (course / "extra" / "with_helpers.py").write_text(HELPER_LECTURE)
    (course / "extra" / "helpers.py").write_text(HELPERS)
    (course / "extra" / "figures" / "dot.png").write_bytes(DOT_PNG)
    (tmp_path / "elsewhere").mkdir()
    run([cli, "trace", "../course/extra/with_helpers.py"], tmp_path / "elsewhere")
    helper_trace = json.loads((course / "extra" / "var" / "traces" / "with_helpers.json").read_text())
    assert helper_trace["header"]["status"] == "ok"
    images = [r for step in helper_trace["steps"] if len(step) > 2 for r in step[2].get("r", []) if r["type"] == "image"]
    assert images and images[0]["src"] and "error" not in images[0]
    assert not (tmp_path / "elsewhere" / "var").exists()

    run([cli, "build", "--out", "site"], course)
    assert (course / "site" / "index.html").is_file() and (course / "site" / "js" / "main.js").is_file()
    assert [entry["name"] for entry in json.loads((course / "site" / "traces" / "index.json").read_text())["traces"]] == [
        "first_lecture"]

    server = subprocess.Popen([cli, "serve", "first_lecture.py", "--port", "0", "--no-browser"], cwd=course,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = wait_for_line(server, URL).group(0)
        page.goto(f"{url}&trace=first_lecture")
        page.wait_for_selector("text=Softmax of three scores", state="attached")  # the plot's title, as SVG
        assert page.locator("h1", has_text="Softmax").count() >= 1
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wait_for_line(process: subprocess.Popen, pattern: re.Pattern, limit: float = 120) -> re.Match:
    """The first line of the process's output that matches, read on a thread so that a silent
    process fails the test at the limit instead of hanging it."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            assert process.poll() is None, "the server exited:\n" + "".join(seen)
            continue
        seen.append(line)
        if match := pattern.search(line):
            return match
    raise AssertionError("no line matched:\n" + "".join(seen))
