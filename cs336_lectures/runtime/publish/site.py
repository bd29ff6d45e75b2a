"""The site: the viewer plus a folder of traces, as the local server and a static host see it.

A site is laid out the same way everywhere (see trace/README.md and the viewer):

    index.html, css/, js/, vendor/ the viewer (copied from viewer/, or the package's copy)
    traces/index.json              the list of traces, built from their headers
    traces/<name>.json             one trace per lecture (or lecture section)
    traces/assets/<hash>.<ext>     images and plots the traces refer to

This module builds the index (the server calls it on every request for traces/index.json)
and implements `cs336-lectures build`, which writes a self-contained folder any static
host can serve:

    cs336-lectures build var/traces/lecture_01.json --out site/
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from cs336_lectures.resources import VIEWER_DIR
from cs336_lectures.runtime.render.passive_svg import make_passive
from cs336_lectures.runtime.trace.format import FORMAT, READABLE_VERSIONS, TraceFormatError, decode_json
from cs336_lectures.runtime.terminal_text import print_visible

VIEWER_PARTS = ("index.html", "css", "js", "vendor")  # vendor/: third-party files with their licences
DEFAULT_TRACES = Path("var/traces")
INDEX_NAME = "index.json"
FAILED_SUFFIX = ".failed.json"  # the server's copy of a failed re-trace, kept beside the good one
# What a page of the site may run: its own scripts, never script inside a trace's HTML (inline
# handlers, javascript: URLs), no plugins, no <base> redirecting its modules. viewer/index.html
# carries exactly this as a <meta> so that a static host enforces it too; the local server
# also sends it as a header, with frame-ancestors (which a <meta> cannot set).
CONTENT_SECURITY_POLICY = "script-src 'self'; object-src 'none'; base-uri 'none'"
# Assets a site may hold: images only. Anything else named under assets/ by a trace (say
# assets/x.html) would be served by a static host as a page of the site's origin.
SITE_ASSET_SUFFIXES = frozenset({"png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico", "avif"})

# Header fields are small and come first in a trace, so reading this much almost always
# finds the whole header without parsing a trace that may be tens of megabytes.
HEADER_PROBE_BYTES = 64 * 1024
ASSET_REFERENCE = re.compile(r"assets/([A-Za-z0-9_\-]+(?:\.[A-Za-z0-9]+)*)")

_header_cache: dict[Path, tuple[tuple[int, int], dict]] = {}


def default_traces_dir(lecture: Path) -> Path:
    """Where a lecture's trace goes without -o / --traces: var/traces/ of the working directory
    when the lecture is inside it (a course's folder, this repository), else var/traces/ beside
    the lecture, so that a lecture traced from anywhere lands with its course."""
    folder = lecture.resolve().parent
    if Path.cwd().resolve() in (folder, *folder.parents):
        return DEFAULT_TRACES
    return folder / DEFAULT_TRACES


class SiteError(Exception):
    """A trace that cannot go into a site; the message says which file and why."""


def trace_files(traces_dir: Path) -> list[Path]:
    """The trace files of a folder, by trace name (a lecture, then its sections): `*.json`
    except the index, hidden temp files, the server's failed re-traces and links to files outside
    the folder."""
    if not traces_dir.is_dir():
        return []
    return sorted(
        (path
         for path in traces_dir.iterdir()
         if path.suffix == ".json" and path.name != INDEX_NAME and not path.name.startswith(".")
         and not path.name.endswith(FAILED_SUFFIX) and path.is_file() and resolves_inside(path, traces_dir)),
        key=lambda path: path.stem,
    )


def resolves_inside(path: Path, folder: Path) -> bool:
    """Whether `path`, symlinks followed, is inside `folder`: a link may not bring an outside
    file's content into an index or a site."""
    try:
        return folder.resolve() in path.resolve().parents
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _check_format(data: object, path: Path) -> dict:
    if not isinstance(data, dict):
        raise SiteError(f"{path}: not a trace (the JSON is not an object)")
    if data.get("format") is None and "steps" in data and "files" in data:
        raise SiteError(f"{path}: a trace in the Stanford course's format; convert it with `cs336-lectures import {path}`")
    if data.get("format") != FORMAT:
        raise SiteError(f"{path}: not a trace (format is {data.get('format')!r}, expected {FORMAT!r})")
    if data.get("version") not in READABLE_VERSIONS:
        known = ", ".join(map(str, READABLE_VERSIONS))
        raise SiteError(f"{path}: trace version {data.get('version')!r} is not supported (this build reads versions {known})")
    header = data.get("header")
    if not isinstance(header, dict):
        raise SiteError(f"{path}: the trace has no header")
    return header


def _probe_header(path: Path) -> dict | None:
    """The header read from the start of the file, or None when it is not there in full.

    A file cut short (a copy or a write that died) must not pass on its header alone: a
    complete trace is one JSON object, so its last non-blank byte is a closing brace.
    """
    with open(path, "rb") as file:
        head = file.read(HEADER_PROBE_BYTES).decode("utf-8", errors="replace")
        file.seek(max(0, path.stat().st_size - 64))
        if not file.read().rstrip().endswith(b"}"):
            return None  # the full parse says what is wrong
    decoder = json.JSONDecoder()
    found = {}
    for key in ("format", "version", "header"):
        match = re.search(r'"%s"\s*:\s*' % key, head)
        if match is None:
            return None
        try:
            found[key], _ = decoder.raw_decode(head, match.end())
        except (ValueError, RecursionError):  # JSONDecodeError, or an int past the digit limit
            return None
    return found


def read_header(path: Path) -> dict:
    """The header of a trace file; SiteError when the file is not a readable trace of this version.

    >>> read_header(Path("var/traces/lecture_01.json"))["status"]
    'ok'
    """
    try:
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
        cached = _header_cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        data = _probe_header(path)
        if data is None:
            data = decode_json(path.read_text(encoding="utf-8"), path)
    except OSError as error:
        raise SiteError(f"{path}: cannot read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise SiteError(f"{path}: not UTF-8 text ({error})") from None
    except TraceFormatError as error:
        raise SiteError(str(error)) from None
    header = _check_format(data, path)
    _header_cache[path] = (key, header)
    return header


def index_entry(path: Path) -> dict:
    """One line of index.json; a broken file gets status "invalid" and the reason as message."""
    name = path.name[: -len(".json")]
    try:
        header = read_header(path)
    except SiteError as error:
        return {"name": name, "file": path.name, "title": name, "num_steps": 0, "created": None,
                "status": "invalid", "message": str(error)}
    entry = {
        "name": name,
        "file": path.name,
        "title": str(header.get("title", name)),
        "num_steps": header.get("num_steps", 0),
        "created": header.get("created"),
        "status": header.get("status", "ok"),
    }
    if header.get("message"):
        entry["message"] = str(header["message"])
    docstring = header.get("docstring")
    if isinstance(docstring, str) and docstring.strip():
        entry["summary"] = docstring.strip().splitlines()[0]  # the card's title and one-line summary
    return entry


def build_index(traces_dir: str | Path) -> dict:
    """index.json for a folder of traces, one entry per trace file in name order.

    >>> build_index("var/traces")["traces"][0]["name"]
    'lecture_01'
    """
    return {"traces": [index_entry(path) for path in trace_files(Path(traces_dir))]}


def referenced_assets(trace_text: str) -> set[str]:
    """File names under assets/ that a trace refers to (renderings, or img tags inside markdown)."""
    return set(ASSET_REFERENCE.findall(trace_text))


# --- cs336-lectures build -----------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures build` (cli.py adds them to its subcommand)."""
    parser.add_argument("traces", nargs="*", metavar="TRACE.json",
                        help=f"traces to include (default: every trace in {DEFAULT_TRACES}/)")
    parser.add_argument("--out", default="site", metavar="DIR",
                        help="folder to write the site into, replaced as a whole (default: site/)")


def _load_trace_text(path: Path) -> str:
    """The text of a trace after checking it parses as a trace of this version."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SiteError(f"{path}: no such trace file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SiteError(f"{path}: cannot read ({error})") from None
    try:
        data = decode_json(text, path)
    except TraceFormatError as error:
        raise SiteError(str(error)) from None
    _check_format(data, path)
    return text


def _check_out(out: Path) -> None:
    """Refuse to replace a folder that is not an earlier build: --out . must not wipe a project."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "traces" / INDEX_NAME).is_file():
        raise SiteError(f"--out {out}: folder is not empty and is not an earlier site build; "
                        "choose another folder or remove it")


def write_site(trace_paths: list[Path], out: Path, viewer_dir: Path = VIEWER_DIR) -> dict:
    """Write the site for these traces into `out` (replacing it) and return its index."""
    names: dict[str, Path] = {}
    for path in trace_paths:
        if path.name in names:
            raise SiteError(f"two traces are named {path.name}: {names[path.name]} and {path}")
        names[path.name] = path
    texts = {path: _load_trace_text(path) for path in trace_paths}
    if not (viewer_dir / "index.html").is_file():
        raise SiteError(f"viewer not found at {viewer_dir}")
    _check_out(out)

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for part in VIEWER_PARTS:
            source = viewer_dir / part
            if source.is_dir():
                shutil.copytree(source, staging / part, ignore=shutil.ignore_patterns(".*"))
            elif source.is_file():
                shutil.copy2(source, staging / part)
        traces = staging / "traces"
        (traces / "assets").mkdir(parents=True)
        for path, text in texts.items():
            (traces / path.name).write_text(text, encoding="utf-8")
            for asset in sorted(referenced_assets(text)):
                _copy_asset(path, asset, traces / "assets")
        index = build_index(traces)
        (traces / INDEX_NAME).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        _replace_folder(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return index


def _copy_asset(trace: Path, asset: str, assets: Path) -> None:
    """Copy assets/<asset> from beside `trace` into the site: an image inside the trace's folder,
    SVGs made passive (passive_svg.py); anything else is left out with a warning."""
    source = trace.parent / "assets" / asset
    suffix = asset.rpartition(".")[2].lower()
    if suffix not in SITE_ASSET_SUFFIXES:
        reason = "is not an image"
    elif not source.is_file():
        reason = "is missing"
    elif not resolves_inside(source, trace.parent):
        reason = "is a link to a file outside the traces folder"
    else:
        if suffix == "svg":
            (assets / asset).write_bytes(make_passive(source.read_bytes()))
        else:
            shutil.copy2(source, assets / asset)
        return
    print_visible(f"cs336-lectures: warning: {trace} refers to assets/{asset}, which {reason}; left out")


def _replace_folder(new: Path, out: Path) -> None:
    """Put `new` at `out`: two renames, so a reader never sees a half-written site."""
    os.chmod(new, 0o755)  # mkdtemp made it private; a site is meant to be read
    if not out.exists():
        os.replace(new, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
    os.rmdir(old)
    os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    """`cs336-lectures build`: write the site; returns the exit status (2 when a trace cannot go in)."""
    if args.traces:
        trace_paths = [Path(path) for path in args.traces]
    else:
        trace_paths = trace_files(DEFAULT_TRACES)
        if not trace_paths:
            print_visible(f"cs336-lectures: error: no traces in {DEFAULT_TRACES}/; "
                          "run `cs336-lectures trace LECTURE.py` first or name the trace files")
            return 2
    try:
        index = write_site(trace_paths, Path(args.out))
    except SiteError as error:
        print_visible(f"cs336-lectures: error: {error}")
        return 2
    entry = Path(args.out) / "index.html"
    print_visible(f"wrote {args.out}/ ({len(index['traces'])} traces); entry: {entry}", sys.stdout)
    return 0
