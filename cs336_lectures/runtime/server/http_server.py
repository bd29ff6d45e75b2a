"""The local server: the viewer and its traces over HTTP, plus live re-tracing and editing.

`cs336-lectures serve lectures/lecture_01.py` serves the site (see site.py) from memory and
disk, traces the lectures that have no fresh trace, watches their files (watch.py), and
whenever one changes re-runs what the edit affects in the lecture's warm kernel (kernel.py;
a tracer subprocess where fork is missing); open viewers hear about it over Server-Sent
Events and reload. The viewer can also edit a lecture (POST /api/source) — so this server runs code,
and guards itself the way Jupyter does:

- it binds 127.0.0.1 unless told otherwise;
- anything that writes or runs code needs the random token printed at start-up;
- a request whose Host is not the server's own (DNS rebinding) is refused, and so is one
  whose Origin is foreign (a browser sends Origin with any request another site's page makes);
- paths are resolved and must stay inside the served folders; only the lectures named on
  the command line can be read as source, edited or re-traced.

A re-trace writes into a temporary folder and replaces the served trace only when it
succeeded, so a syntax error or an exception leaves the last good trace in place. A run
resumed from a checkpoint is then checked by a whole run in the background, unless
`--no-verify`: a difference replaces it and is logged (verification.py).

    cs336-lectures serve lectures/lecture_01.py --port 8336
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import queue
import secrets
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import parse_qs, unquote, urlsplit

from cs336_lectures.runtime.i18n.run_messages import note
from cs336_lectures.runtime.publish.site import (
    CONTENT_SECURITY_POLICY,
    INDEX_NAME,
    VIEWER_DIR,
    build_index,
)
from cs336_lectures.runtime.server.events import EventHub
from cs336_lectures.runtime.server.retracing import LectureWatcher, Retracer
from cs336_lectures.runtime.server.served_lecture import Lecture
from cs336_lectures.runtime.server.tracer_subprocess import TRACER_COMMAND
from cs336_lectures.runtime.server.traces_folder import EARLY_DIR, early_trace, shown_early_trace
from cs336_lectures.runtime.server.source_files import (
    SourceConflict,
    SourceError,
    read_source,
    save_source,
)
from cs336_lectures.runtime.server.verification import LOG_NAME

TOKEN_HEADER = "X-CS336-Token"
# On every response, so the viewer can tell this server from a static host without asking a
# static host for /api/info (a 404 each page load, logged as an error by browsers).
SERVER_HEADER = "X-CS336-Server"
# The tracer's watchdog and the server's waits cannot count further (epoll's limit is 2**31 ms).
SSE_KEEPALIVE_SECONDS = 15.0
MAX_SOURCE_BYTES = 5 * 1024 * 1024
# A file name longer than this cannot exist (NAME_MAX on Linux and macOS); refused before the
# file system says "File name too long".
MAX_NAME_BYTES = 255
# Seconds one read or write on a connection may wait: a client that stops sending in the
# middle of its headers or body, or stops reading an event stream, frees its thread after this.
CONNECTION_TIMEOUT_SECONDS = 60.0

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}


class Refused(Exception):
    """A request the server will not serve; carries the HTTP status and a one-line reason."""

    def __init__(self, status: HTTPStatus, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def contained_file(root: Path, relative: str) -> Path:
    """The file `relative` names inside `root`, refusing anything that could leave it.

    contained_file(VIEWER_DIR, "js/main.js") is viewer/js/main.js, resolved;
    "../pyproject.toml", or a symlink to a file outside, raises Refused (403).
    """
    parts = relative.split("/")
    if any(part in ("..", ".") or "\\" in part or "\0" in part for part in parts):
        raise Refused(HTTPStatus.FORBIDDEN, "path not allowed")
    if any(part.startswith(".") for part in parts if part):
        raise Refused(HTTPStatus.NOT_FOUND, "not found")  # hidden files, e.g. a re-trace in progress
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in parts):
        raise Refused(HTTPStatus.NOT_FOUND, f"not found (a name in the path is longer than {MAX_NAME_BYTES} bytes)")
    try:
        root = root.resolve()
        path = (root / "/".join(part for part in parts if part)).resolve()
        if path != root and root not in path.parents:
            raise Refused(HTTPStatus.FORBIDDEN, "path leaves the served folder")
        if not path.is_file():
            raise Refused(HTTPStatus.NOT_FOUND, "not found")
    except (OSError, RuntimeError) as error:  # e.g. a symlink loop; Python 3.11 reports some as RuntimeError
        raise Refused(HTTPStatus.NOT_FOUND, f"not found ({getattr(error, 'strerror', None) or error})") from None
    return path


def _mark_failing(index: dict, latest: dict[str, dict], served: Iterable[str] = ()) -> dict:
    """Mark the lectures whose file on disk currently fails to trace (their last re-trace failed
    while an older good trace stays), with the first line of why. A served lecture that has no
    trace at all because its only runs failed before writing one (a syntax error) is listed too."""
    listed = {entry["name"] for entry in index["traces"]}
    for name in served:
        event = latest.get(name)
        if name not in listed and event and event.get("state") == "error":
            index["traces"].append({"name": name, "file": f"{name}.json", "title": name, "num_steps": 0,
                                    "created": None, "status": "error"})
    for entry in index["traces"]:
        event = latest.get(entry["name"])
        if event and event.get("state") == "error" and not event.get("installed"):
            entry["failing"] = str(event.get("message") or "the re-trace failed").splitlines()[0]
    return index


def _mark_running(index: dict, latest: dict[str, dict], served: Iterable[str]) -> dict:
    """Mark the served lectures being traced now (`running`: true), so that the list says so
    while the server traces stale lectures after start-up; one with no trace yet is listed too."""
    listed = {entry["name"]: entry for entry in index["traces"]}
    for name in served:
        if (latest.get(name) or {}).get("state") not in ("running", "early"):
            continue
        if name not in listed:
            listed[name] = {"name": name, "file": f"{name}.json", "title": name, "num_steps": 0, "created": None,
                            "status": "running"}
            index["traces"].append(listed[name])
        listed[name]["running"] = True
    return index


def _mark_verification(index: dict, latest: dict[str, dict]) -> dict:
    """Mark each trace whose last resumed run a whole run is checking ("pending"), agreed with
    ("verified") or replaced ("corrected")."""
    for entry in index["traces"]:
        state = (latest.get(entry["name"]) or {}).get("verification")
        if state:
            entry["verification"] = state
    return index


class LectureServer(ThreadingHTTPServer):
    """The HTTP server and everything it serves; `start()` runs it in a thread (tests), `serve_forever()` in this one."""

    daemon_threads = True

    def __init__(self, lectures: list[Path], traces_dir: Path, host: str = "127.0.0.1", port: int = 8336,
                 viewer_dir: Path = VIEWER_DIR, max_steps: int | None = None, timeout: float | None = None,
                 token: str | None = None, log: Callable[[str], None] = print, verify: bool = True,
                 backups_dir: Path | None = None):
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), RequestHandler)
        self.host = host
        self.port = self.server_address[1]
        self.viewer_dir = viewer_dir.resolve()
        self.traces_dir = traces_dir.resolve()
        # Versions a browser save replaced, beside the traces (var/backups), never beside the lecture.
        self.backups_dir = (backups_dir or traces_dir.resolve().parent / "backups").resolve()
        self.token = token or secrets.token_urlsafe(32)
        self.log = log
        self.lectures: dict[str, Lecture] = {}
        for path in lectures:
            lecture = Lecture(path)
            if lecture.name in self.lectures and self.lectures[lecture.name].path == lecture.path:
                continue  # the same file named twice
            if lecture.name in self.lectures:
                raise ValueError(f"two lectures would both write the trace {lecture.name}.json: "
                                 f"{self.lectures[lecture.name].given} and {path}")
            self.lectures[lecture.name] = lecture
        self.hub = EventHub()
        self.retracer = Retracer(self.traces_dir, self.hub, TRACER_COMMAND, max_steps, timeout, log,
                                 verification_log=self.traces_dir.parent / LOG_NAME if verify else None)
        self.watcher = LectureWatcher(self.lectures, self.retracer)
        self.allowed_hosts = {f"{name}:{self.port}" for name in ("127.0.0.1", "localhost", "[::1]")}
        self.allowed_hosts.add(f"{_url_host(host)}:{self.port}".lower())
        self.allowed_origins = {f"http://{allowed}" for allowed in self.allowed_hosts}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else _url_host(self.host)
        return f"http://{host}:{self.port}/?token={self.token}"

    def begin(self) -> None:
        """Trace the lectures whose trace is missing or older than the file, then watch them all."""
        for lecture in self.lectures.values():
            for leftover in (early_trace(self.traces_dir, lecture.name),
                             shown_early_trace(self.traces_dir, lecture.name)):
                leftover.unlink(missing_ok=True)  # a killed server's
            trace = self.traces_dir / f"{lecture.name}.json"
            try:
                newest = max(path.stat().st_mtime for path in lecture.sources() if path == lecture.path or path.exists())
                stale = trace.stat().st_mtime < newest
            except FileNotFoundError:
                stale = True
            if stale:
                self.retracer.request(lecture)
            else:
                self.retracer.warm(lecture)
        self.watcher.start()

    def start(self) -> "LectureServer":
        self.begin()
        self._thread = threading.Thread(target=self.serve_forever, name="http", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching, end the event streams, kill running tracers, stop serving."""
        self.watcher.stop()
        self.hub.close()
        self.retracer.close()
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=5)
        self.server_close()

    def is_own_host(self, host: str) -> bool:
        """Our names with our port, or any IP address with our port (how other machines reach
        `--host 0.0.0.0`): DNS rebinding needs a host name, so an address is never foreign."""
        if host in self.allowed_hosts:
            return True
        name, _, port = host.rpartition(":")
        try:
            ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
        except ValueError:
            return False
        return port == str(self.port)

    def check_token(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    @staticmethod
    def lecture_path_for_display(lecture: Lecture) -> str:
        return lecture.shown


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class RequestHandler(BaseHTTPRequestHandler):
    server: LectureServer
    server_version = "cs336-lectures"
    protocol_version = "HTTP/1.1"
    timeout = CONNECTION_TIMEOUT_SECONDS  # socketserver applies it to every read and write

    # --- dispatch -------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._handle(write=False, head=False)

    def do_HEAD(self) -> None:
        self._handle(write=False, head=True)

    def do_POST(self) -> None:
        self._handle(write=True, head=False)

    def _handle(self, write: bool, head: bool) -> None:
        try:
            self._check_host()
            self._check_origin()
            url = urlsplit(self.path)
            path = unquote(url.path)
            query = parse_qs(url.query)
            if write:
                self._check_token()
                self._post(path, query)
            elif path == "/api/events":
                self._events(head)
            else:
                self._get(path, query, head)
        except Refused as refusal:
            self.close_connection = True  # a refused POST's body was never read
            self._send_json({"error": refusal.reason}, refusal.status, head=head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _host(self) -> str:
        return (self.headers.get("Host") or "").strip().lower()

    def _check_host(self) -> None:
        host = self._host()
        if not self.server.is_own_host(host):
            raise Refused(HTTPStatus.FORBIDDEN, f"Host {host or '(none)'} is not this server")

    def _check_origin(self) -> None:
        """A page of this server sends its own origin: the Host it asked, or one of our names."""
        origin = self.headers.get("Origin")
        if origin is None:
            return
        origin = origin.strip().lower()
        if origin not in self.server.allowed_origins and origin != f"http://{self._host()}":
            raise Refused(HTTPStatus.FORBIDDEN, f"Origin {origin} is not this server")

    def _check_token(self) -> None:
        if not self.server.check_token(self.headers.get(TOKEN_HEADER)):
            raise Refused(HTTPStatus.FORBIDDEN, f"missing or wrong {TOKEN_HEADER}: open the URL the server printed")

    def _lecture(self, query: dict) -> Lecture:
        name = (query.get("trace") or [""])[0]
        lecture = self.server.lectures.get(name)
        if lecture is None:
            raise Refused(HTTPStatus.NOT_FOUND, f"no lecture named {name!r} is served for editing")
        return lecture

    # --- GET ------------------------------------------------------------------------------

    def _get(self, path: str, query: dict, head: bool) -> None:
        server = self.server
        if path == "/api/info":
            lectures = {name: server.lecture_path_for_display(lecture) for name, lecture in server.lectures.items()}
            self._send_json({"server": True, "lectures": lectures}, head=head)
        elif path == "/api/source":
            lecture = self._lecture(query)
            shown = server.lecture_path_for_display(lecture)
            try:
                source, version = read_source(lecture.path)
            except (OSError, SourceError) as error:
                raise Refused(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot read {shown}: {error}") from None
            self._send_json({"path": shown, "source": source, "version": version}, head=head)
        elif path.startswith("/api/"):
            raise Refused(HTTPStatus.NOT_FOUND, "no such API")
        elif path == f"/traces/{INDEX_NAME}":
            index = _mark_failing(build_index(server.traces_dir), server.hub.latest, server.lectures)
            index = _mark_running(index, server.hub.latest, server.lectures)
            self._send_json(_mark_verification(index, server.hub.latest), head=head)
        elif path.startswith(f"/traces/{EARLY_DIR}/assets/"):
            # The early view's figures, which it names relative to itself, are the traces folder's.
            figure = path[len(f"/traces/{EARLY_DIR}/assets/"):]
            self._send_file(contained_file(server.traces_dir / "assets", figure), head)
        elif path.startswith("/traces/"):
            self._send_file(contained_file(server.traces_dir, path[len("/traces/"):]), head)
        else:
            relative = path.lstrip("/") or "index.html"
            self._send_file(contained_file(server.viewer_dir, relative), head)

    # --- POST -----------------------------------------------------------------------------

    def _post(self, path: str, query: dict) -> None:
        server = self.server
        if path == "/api/source":
            lecture = self._lecture(query)
            shown = server.lecture_path_for_display(lecture)
            source, base = self._read_source()
            try:
                version = self._save(lecture, source, base)
            except SourceConflict as conflict:
                # Both versions: the editor's (base) and the one on disk, with its text, so the
                # editor can offer to reload it, keep its own, or show the difference.
                self._send_json({"error": f"{shown} changed on disk since it was loaded: not saved", "conflict": True,
                                 "base": base, "version": conflict.version, "source": conflict.source},
                                HTTPStatus.CONFLICT)
                return
            except SourceError as error:
                raise Refused(HTTPStatus.BAD_REQUEST, f"cannot save {shown}: {error}") from None
            except OSError as error:
                raise Refused(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot save {shown}: {error}") from None
            server.hub.publish({"trace": lecture.name, "state": "source", "version": version}, remember=False)
            server.retracer.request(lecture, supersede=True)
            server.log(f"{shown} saved from the browser")
            self._send_json({"queued": True, "trace": lecture.name, "version": version}, HTTPStatus.ACCEPTED)
        elif path == "/api/retrace":
            lecture = self._lecture(query)
            server.retracer.request(lecture, full=note("a re-trace was asked for"))
            self._send_json({"queued": True, "trace": lecture.name}, HTTPStatus.ACCEPTED)
        else:
            raise Refused(HTTPStatus.NOT_FOUND, "no such API")

    def _save(self, lecture: Lecture, source: str, base: str | None) -> str:
        """Write the lecture over version `base`, keeping the versions it replaces as backups (source_files.py)."""
        with lecture.lock:  # the watcher must not take this write for an outside change
            version = save_source(lecture.path, source, self.server.backups_dir, base)
            lecture.seen = lecture.stamp()
        return version

    def _read_source(self) -> tuple[str, str | None]:
        """The body's source and the version it was based on (None: save over whatever is on disk)."""
        given = (self.headers.get("Content-Length") or "").strip()
        if not given:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if not (given.isascii() and given.isdigit()):  # int() would also take "-5", "+5" and "5_0"
            raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {given[:40]!r} is not a number of bytes")
        length = int(given)
        if length > MAX_SOURCE_BYTES:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the source may be at most {MAX_SOURCE_BYTES} bytes")
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raise Refused(HTTPStatus.REQUEST_TIMEOUT, f"the body did not arrive within {self.timeout:g} s") from None
        if len(raw) < length:
            raise Refused(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:  # not UTF-8, not JSON, or an int past the digit limit
            raise Refused(HTTPStatus.BAD_REQUEST, 'expected a JSON body {"source": "..."}') from None
        except RecursionError:
            raise Refused(HTTPStatus.BAD_REQUEST, "the JSON body is nested too deeply") from None
        if not isinstance(body, dict) or not isinstance(body.get("source"), str):
            raise Refused(HTTPStatus.BAD_REQUEST, 'expected a JSON body {"source": "...", "base": "VERSION"}')
        if not isinstance(body.get("base"), (str, type(None))):
            raise Refused(HTTPStatus.BAD_REQUEST, '"base" must be the version the source was loaded at')
        return body["source"], body.get("base")

    # --- Server-Sent Events ---------------------------------------------------------------

    def _events(self, head: bool) -> None:
        """One stream per viewer: the latest state of each trace (marked replay), then live events."""
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if head:  # the headers a GET would get, and no stream
            return
        hub = self.server.hub
        listener, latest = hub.subscribe()  # `latest` includes anything published before this
        try:
            self.wfile.write(b"retry: 1000\n\n")
            for event in latest:
                self._send_event({**event, "replay": True})
            self.wfile.flush()
            while True:
                try:
                    event = listener.get(timeout=SSE_KEEPALIVE_SECONDS)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if event is None:
                    return
                self._send_event(event)
                self.wfile.flush()
        finally:
            hub.unsubscribe(listener)

    def _send_event(self, event: dict) -> None:
        self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")

    # --- responses ------------------------------------------------------------------------

    def _common_headers(self) -> None:
        self.send_header(SERVER_HEADER, "1")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        # Scripts only from this server (never from HTML inside a trace), and no framing of the editor.
        # The static site carries the same policy as a <meta> (site.py), which cannot say frame-ancestors.
        self.send_header("Content-Security-Policy", f"{CONTENT_SECURITY_POLICY}; frame-ancestors 'none'")
        self.send_header("X-Frame-Options", "DENY")

    def _send_json(self, data: object, status: HTTPStatus = HTTPStatus.OK, head: bool = False) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self._common_headers()
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _send_file(self, path: Path, head: bool) -> None:
        try:
            body = path.read_bytes()
        except OSError:
            raise Refused(HTTPStatus.NOT_FOUND, "not found") from None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", CONTENT_TYPES.get(path.suffix.lower(), "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self._common_headers()
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:
        """Quiet: the terminal shows re-traces and errors, not every request."""


# --- cs336-lectures serve ---------------------------------------------------------------------
