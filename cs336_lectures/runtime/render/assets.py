"""Assets: the images and plots a trace shows, stored once by content hash.

A trace is one JSON file; pictures live beside it in ``assets/``, named by the SHA-256 of
their bytes, so the same image shown twice is stored once and re-tracing rewrites nothing.
Small ones (under 8 KiB) are inlined as ``data:`` URLs instead, which saves a request and
keeps tiny traces self-contained. Remote images are downloaded once into a cache folder
(``var/files``) so re-tracing a lecture works offline; without a network, a download gives up
within seconds, and once per host: other images from a host that could not be reached fail at once.

    >>> store = AssetStore(Path("var/traces/assets"), Path("var/files"))
    >>> store.add(png_bytes, "png")       # 'assets/3f2a9c0d1b7e4a55.png' or 'data:image/png;base64,...'
"""

from __future__ import annotations

import base64
import hashlib
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.render.passive_svg import make_passive

INLINE_LIMIT = 8 * 1024  # bytes; smaller assets become data: URLs
FETCH_TIMEOUT_S = 3.0  # per socket operation
FETCH_DEADLINE_S = 8.0  # for a whole download, name lookup included (which no socket timeout covers)
FETCH_MAX_BYTES = 64 * 1024 * 1024  # a lecture image larger than this is a mistake

MIME_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "svg": "image/svg+xml",
    "bmp": "image/bmp",
    "ico": "image/x-icon",
    "avif": "image/avif",
    "pdf": "application/pdf",
}
_SUFFIX = re.compile(r"[a-z0-9]{1,10}")


class AssetFetchError(OSError):
    """A remote asset could not be downloaded; `unreachable` when the host itself could not be reached."""

    def __init__(self, url: str, reason: str, unreachable: bool = False):
        super().__init__(f"could not fetch {url}: {reason}")
        self.reason = reason
        self.unreachable = unreachable


class AssetStore:
    """Content-addressed asset files for one trace folder, plus a download cache."""

    def __init__(self, folder: Path, cache_dir: Path):
        self.folder = Path(folder)
        self.cache_dir = Path(cache_dir)
        self._unreachable: dict[str, str] = {}  # host -> why it could not be reached

    def add(self, data: bytes, suffix: str) -> str:
        """Store `data`; return 'assets/<sha256-16>.<suffix>' (relative to the trace) or a data: URL.

        >>> store.add(b"<svg .../>", "svg")   # 'data:image/svg+xml;base64,PHN2Zy...'
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"asset data must be bytes, not {type(data).__name__}")
        data = bytes(data)
        suffix = normalize_suffix(suffix)
        if len(data) < INLINE_LIMIT:
            mime = MIME_TYPES.get(suffix, "application/octet-stream")
            return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        if suffix == "svg":  # a file a static host serves as a document of the site: it must not script
            data = make_passive(data)
        name = f"{hashlib.sha256(data).hexdigest()[:16]}.{suffix}"
        path = self.folder / name
        # Same name means same content, so an existing file of the right size is kept as is.
        if not (path.is_file() and path.stat().st_size == len(data)):
            self.folder.mkdir(parents=True, exist_ok=True)
            write_bytes_atomically(path, data)
        return f"assets/{name}"

    def fetch(self, url: str) -> bytes:
        """The bytes at `url`, downloaded once and then read from the cache; raises AssetFetchError.

        >>> store.fetch("https://example.org/figure.png")[:8]   # b'\\x89PNG\\r\\n\\x1a\\n'
        """
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            raise AssetFetchError(url, "only http(s) URLs can be fetched")
        cached = self.cache_dir / cache_name(url)
        if cached.is_file():
            return cached.read_bytes()
        host = parts.netloc.lower()
        if host in self._unreachable:
            raise AssetFetchError(url, f"{host} was unreachable earlier ({self._unreachable[host]})", unreachable=True)
        try:
            data = download(url)
        except AssetFetchError as error:
            if error.unreachable:
                self._unreachable[host] = error.reason
            raise
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(cached, data)
        return data


def download(url: str) -> bytes:
    """GET `url`, giving up after FETCH_DEADLINE_S; any failure becomes an AssetFetchError saying why."""
    import urllib.error
    import urllib.request  # imported here: it pulls in http, email and ssl

    outcome: dict[str, object] = {}

    def get() -> None:  # in a thread, so that a hanging name lookup cannot hold the lecture
        request = urllib.request.Request(url, headers={"User-Agent": "cs336-lectures"})
        try:
            with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
                outcome["data"] = response.read(FETCH_MAX_BYTES + 1)
        except Exception as error:  # URLError, HTTPError, timeouts, bad URLs, ...
            outcome["error"] = error

    thread = threading.Thread(target=get, name="cs336-fetch", daemon=True)
    thread.start()
    thread.join(FETCH_DEADLINE_S)
    if thread.is_alive():
        raise AssetFetchError(url, f"no answer within {FETCH_DEADLINE_S:g} s", unreachable=True)
    error = outcome.get("error")
    if error is not None:
        http_error = isinstance(error, urllib.error.HTTPError)  # the host answered, with an error status
        raise AssetFetchError(url, str(error), unreachable=not http_error) from error
    data = outcome["data"]
    if len(data) > FETCH_MAX_BYTES:
        raise AssetFetchError(url, f"larger than {FETCH_MAX_BYTES} bytes")
    return data


def cache_name(url: str) -> str:
    """Cache file name for `url`: a hash of the URL, keeping its extension when it has a sane one."""
    digest = hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    suffix = Path(urlsplit(url).path).suffix.lower().lstrip(".")
    return f"{digest}.{suffix}" if _SUFFIX.fullmatch(suffix) else digest


def normalize_suffix(suffix: str) -> str:
    """'.PNG' -> 'png'; refuses anything that is not a short alphanumeric extension."""
    if not isinstance(suffix, str):
        raise TypeError(f"asset suffix must be a string, not {type(suffix).__name__}")
    normalized = suffix.lower().lstrip(".")
    if not _SUFFIX.fullmatch(normalized):
        raise ValueError(f"bad asset suffix {suffix!r}: expected a short extension like 'png'")
    return "jpg" if normalized == "jpeg" else normalized


def sniff_image_suffix(data: bytes) -> str | None:
    """The image format of `data` from its first bytes ('png', 'jpg', 'svg', ...), or None."""
    head = data[:512]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith(b"BM"):
        return "bmp"
    if head.startswith(b"\x00\x00\x01\x00"):
        return "ico"
    if head[4:12] in (b"ftypavif", b"ftypavis"):
        return "avif"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith(b"<svg") or (text.startswith((b"<?xml", b"<!--", b"<!doctype svg")) and b"<svg" in head.lower()):
        return "svg"
    return None
