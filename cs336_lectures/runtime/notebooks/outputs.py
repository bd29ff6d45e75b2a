"""Lectures inside a Jupyter (IPython) kernel: renderings and values as MIME bundles.

Run in a kernel (Jupyter, JupyterLab, Colab), the primitives display what they would have put
on the page: `text()` as markdown (Jupyter renders its math), `image()` as the image, `link()`
as a link (a link to code as the definition's source), `plot()` as SVG. The kernel is found
without importing IPython: a kernel has always imported it already, so a process where
`IPython` is not in sys.modules is not one and the primitives stay no-ops there.

The same bundles fill the outputs of an exported notebook (cs336_lectures.runtime.notebooks.export),
from the trace, so a notebook reads the same before and after it runs. `show_values` is what
the export writes where a lecture has `# @inspect`: comments mean nothing to a kernel.

    >>> show_values(ratio=2.5)        # in a notebook cell: an output 'ratio = 2.5'
"""

from __future__ import annotations

import base64
import inspect
import linecache
import sys
from typing import Any, Callable

from cs336_lectures.runtime.render.assets import MIME_TYPES, download, normalize_suffix, sniff_image_suffix
from cs336_lectures.runtime.render.math_spans import rewrite_math

__all__ = ["kernel_recorder", "rendering_bundle", "show_values", "values_bundle"]

RASTER_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # base64 in a notebook; SVG is text


def in_kernel() -> bool:
    """Whether this process is an IPython kernel (never importing IPython to find out)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def kernel_recorder() -> KernelRecorder | None:
    """A recorder that displays renderings, when this process is an IPython kernel; else None."""
    return KernelRecorder() if in_kernel() else None


class InlineAssets:
    """The asset store of a kernel: images and plots travel inside the output as data: URLs."""

    def add(self, data: bytes, suffix: str) -> str:
        mime = MIME_TYPES.get(normalize_suffix(suffix), "application/octet-stream")
        return f"data:{mime};base64,{base64.b64encode(bytes(data)).decode('ascii')}"

    def fetch(self, url: str) -> bytes:
        return download(url)


class KernelRecorder:
    """The primitives' recorder in a kernel: each rendering is displayed as soon as it is made."""

    def __init__(self) -> None:
        self.assets = InlineAssets()
        self._paths: list[str] = []

    def file_index(self, path: str) -> int:
        if path not in self._paths:
            self._paths.append(path)
        return self._paths.index(path)

    def add_rendering(self, rendering: dict) -> None:
        from IPython.display import display

        def definition(file: int, line: int) -> str:
            # linecache rather than the file: a function defined in a cell has no file on disk.
            path = self._paths[file]
            linecache.checkcache(path)
            return definition_at("".join(linecache.getlines(path)), line)

        bundle, metadata = rendering_bundle(rendering, data_url_bytes, definition)
        display(bundle, metadata=metadata, raw=True)

    def open_solution(self, path: str, first_line: int, last_line: int) -> int:
        """A notebook shows a solution's outputs where they are made: there is nothing to fold."""
        return 0

    def close_solution(self, solution: int) -> None:
        pass


def show_values(**values: Any) -> None:
    """Show `name = value` for each value, as the trace records `# @inspect name` (printed outside a kernel)."""
    from cs336_lectures.runtime.trace.value_text import format_values
    from cs336_lectures.runtime.trace.values import ValueEncoder

    encoder = ValueEncoder()
    text = format_values({name: encoder.encode(value) for name, value in values.items()})
    if not in_kernel():
        print(text)
        return
    from IPython.display import display

    display({"text/plain": text}, raw=True)


def values_bundle(values: dict[str, Any]) -> dict:
    """The output `show_values` displays, made from encoded values (a trace's)."""
    from cs336_lectures.runtime.trace.value_text import format_values

    return {"text/plain": format_values(values)}


def rendering_bundle(rendering: dict, asset_bytes: Callable[[str], bytes],
                     definition: Callable[[int, int], str]) -> tuple[dict, dict]:
    """(MIME bundle, metadata) showing one rendering. `asset_bytes(src)` reads an image's bytes;
    `definition(file, line)` is the source of the function or class an internal link names."""
    kind = rendering.get("type")
    if kind == "markdown":
        if "source" not in rendering:  # a version-1 trace kept only the HTML
            return {"text/html": rendering["html"], "text/plain": rendering["html"]}, {}
        source = rendering["source"]
        markdown = f"```\n{source}\n```" if rendering.get("verbatim") else jupyter_markdown(source)
        return {"text/markdown": markdown, "text/plain": source}, {}
    if kind == "link":
        return _link_bundle(rendering, definition), {}
    if rendering.get("src") is None:
        reason = rendering.get("error", "not available")
        return {"text/plain": f"[image {rendering.get('alt', '')}: {reason}]"}, {}
    data = asset_bytes(rendering["src"])
    alt = rendering.get("alt", "")
    if kind == "plot" or sniff_image_suffix(data) is None:
        return {"image/svg+xml": data.decode("utf-8"), "text/plain": f"[plot: {alt}]"}, {}
    mime = MIME_TYPES[sniff_image_suffix(data)]
    if mime not in RASTER_TYPES:
        return {"text/plain": f"[image {alt}: {mime} cannot be shown in a notebook]"}, {}
    width = rendering.get("width")
    metadata = {mime: {"width": width}} if isinstance(width, (int, float)) else {}
    return {mime: base64.b64encode(data).decode("ascii"), "text/plain": f"[image: {alt}]"}, metadata


def jupyter_markdown(source: str) -> str:
    """`source` for Jupyter (or GitHub): formulas kept, and each dollar our renderer reads as a
    dollar sign escaped, since they take any two dollars for a formula ("$500 now, $125 later")."""
    return rewrite_math(source, formula=lambda markup, latex: f"{markup}{latex}{markup}", dollar="\\$")


def _link_bundle(rendering: dict, definition: Callable[[int, int], str]) -> dict:
    title = rendering["title"]
    if "url" not in rendering:
        code = definition(rendering["file"], rendering["line"])
        return {"text/markdown": f"`{title}`:\n\n```python\n{code}\n```", "text/plain": f"{title}:\n{code}"}
    details = [", ".join(rendering.get("authors", ())), rendering.get("date"), rendering.get("organization")]
    about = "; ".join(detail for detail in details if detail)
    markdown = f"[{title}]({rendering['url']})" + (f" ({about})" if about else "")
    if rendering.get("description"):
        markdown += f": {rendering['description']}"
    return {"text/markdown": markdown, "text/plain": f"{title} <{rendering['url']}>"}


def definition_at(source: str, line: int) -> str:
    """The block (a def or class, with its decorators) that starts at `line` of `source`."""
    lines = source.splitlines(keepends=True)[line - 1:]
    try:
        block = inspect.getblock(lines)
    except (SyntaxError, IndentationError):  # a module link points at line 1 of a whole file
        block = lines
    return "".join(block).rstrip("\n")


def data_url_bytes(url: str) -> bytes:
    """The bytes of a base64 data: URL (what InlineAssets makes)."""
    header, _, payload = url.partition(",")
    if not (header.startswith("data:") and header.endswith(";base64")):
        raise ValueError(f"not a base64 data URL: {url[:40]}")
    return base64.b64decode(payload)
