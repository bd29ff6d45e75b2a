"""SVG assets that cannot run script, wherever their URL is opened.

In the viewer an SVG is shown with <img>, where browsers never run its script. Opened on its
own (a static host serves `traces/assets/<hash>.svg` as image/svg+xml), the same file is a
document: `<script>`, `onload=`, `<a href="javascript:...">`, `<foreignObject>` with HTML or an
XSLT stylesheet all run with the site's origin. So every SVG asset goes through
`make_passive` when it is stored as a file (AssetStore.add) and again when `cs336-lectures build` copies
it into a site:

- an SVG made only of static drawing (the vocabulary matplotlib and drawing programs write:
  shapes, paths, text, gradients, clip paths, `<use>` of its own parts, embedded raster
  images, a stylesheet without external references) is kept byte for byte;
- anything else is not edited but wrapped: a new SVG of the same size whose only content is
  `<image href="data:image/svg+xml;base64,...">` holding the original. An SVG drawn as an
  image runs no script and loads nothing, so the picture shows as before and nothing in it
  can act. Nothing is lost, and no list of dangerous features has to be complete: only the
  allow-list below decides.

    make_passive(matplotlib_svg) is matplotlib_svg      # unchanged
    make_passive(b'<svg onload="alert(1)"/>')           # b'<svg ...><image href="data:image/svg+xml;base64,..."/></svg>'
"""

from __future__ import annotations

import base64
import re
from xml.parsers import expat

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
# Metadata vocabularies (RDF, Creative Commons, Dublin Core): never rendered, never run.
METADATA_NAMESPACES = frozenset({
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://creativecommons.org/ns#",
    "http://purl.org/dc/elements/1.1/", "http://web.resource.org/cc/",
})
STATIC_ELEMENTS = frozenset(
    "svg g defs use symbol title desc metadata style path rect circle ellipse line polyline polygon "
    "text tspan clipPath mask pattern marker linearGradient radialGradient stop image filter "
    "feGaussianBlur feOffset feBlend feFlood feComposite feMerge feMergeNode feColorMatrix".split()
)
# In a CSS value or stylesheet: external loads, old script hooks and escapes that could hide either.
UNSAFE_CSS = re.compile(r"@import|expression\s*\(|javascript:|\\|<", re.IGNORECASE)
CSS_URL = re.compile(r"url\(\s*['\"]?\s*([^)'\"\s]*)", re.IGNORECASE)
ROOT_TAG = re.compile(rb"<svg\b([^>]*)>", re.IGNORECASE)
ROOT_ATTRIBUTE = re.compile(r"""([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
# Sizes copied onto the wrapper: numbers, units, percentages, alignment keywords, nothing else.
SIZE_VALUE = re.compile(r"[\w.%+\-\s,]{1,100}")
SIZE_ATTRIBUTES = ("width", "height", "viewBox", "preserveAspectRatio")


class _Active(Exception):
    """Found something outside the static vocabulary; the message says what (for tests and logs)."""


def make_passive(data: bytes) -> bytes:
    """`data` itself when it is a static drawing, else the same picture wrapped as an image."""
    return data if active_content(data) is None else wrap_as_image(data)


def active_content(data: bytes) -> str | None:
    """None for an SVG made only of static drawing; else the first thing that is not, in words."""
    checker = _Checker()
    try:
        checker.run(data)
    except _Active as found:
        return str(found)
    except expat.ExpatError as error:
        return f"not well-formed XML ({error})"
    return None


class _Checker:
    """Walks the XML with expat (no entity expansion, no external loads) and raises _Active."""

    def __init__(self) -> None:
        self.parser = expat.ParserCreate(namespace_separator=" ")
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.text
        self.parser.ProcessingInstructionHandler = self.instruction
        self.parser.StartDoctypeDeclHandler = self.doctype
        self.parser.EntityDeclHandler = self.entity
        self.in_style = False

    def run(self, data: bytes) -> None:
        self.parser.Parse(data, True)

    def start(self, name: str, attributes: dict[str, str]) -> None:
        namespace, _, local = name.rpartition(" ")
        if namespace in METADATA_NAMESPACES:
            return
        if namespace != SVG or local not in STATIC_ELEMENTS:
            raise _Active(f"element <{local}> ({namespace or 'no namespace'})")
        for attribute, value in attributes.items():
            _check_attribute(local, attribute, value)
        self.in_style = local == "style"

    def end(self, name: str) -> None:
        self.in_style = False

    def text(self, data: str) -> None:
        if self.in_style:
            _check_css(data, "the stylesheet")

    def instruction(self, target: str, data: str) -> None:
        raise _Active(f"processing instruction <?{target}?>")  # e.g. an XSLT stylesheet, which can script

    def doctype(self, name: str, system_id: str | None, public_id: str | None, has_internal_subset: bool) -> None:
        if has_internal_subset:
            raise _Active("a DOCTYPE with declarations of its own")

    def entity(self, *declaration: object) -> None:
        raise _Active("an entity declaration")


def _check_attribute(element: str, attribute: str, value: str) -> None:
    namespace, _, local = attribute.rpartition(" ")
    if local.lower().startswith("on"):
        raise _Active(f"event handler {local}= on <{element}>")
    if local == "href" and namespace in ("", XLINK):
        internal = value.startswith("#")
        embedded_image = element == "image" and value.lower().startswith("data:image/")
        if not (internal or embedded_image):
            raise _Active(f"a link to {value[:60]!r} on <{element}>")
    elif namespace not in ("", XLINK, "http://www.w3.org/XML/1998/namespace", *METADATA_NAMESPACES):
        raise _Active(f"attribute {local}= in namespace {namespace}")
    _check_css(value, f"{local}= on <{element}>")


def _check_css(value: str, where: str) -> None:
    """Style values and stylesheets may refer only to the drawing's own parts (url(#id))."""
    unsafe = UNSAFE_CSS.search(value)
    if unsafe:
        raise _Active(f"{where}: {unsafe.group()!r}")
    for target in CSS_URL.findall(value):
        if not target.startswith("#"):
            raise _Active(f"{where}: url({target[:60]})")


def wrap_as_image(data: bytes) -> bytes:
    """An SVG of the same size as `data` that shows it through <image>, where it cannot act."""
    root = ROOT_TAG.search(data)
    attributes = {}
    if root is not None:
        for match in ROOT_ATTRIBUTE.finditer(root.group(1).decode("utf-8", errors="replace")):
            attributes[match.group(1)] = match.group(2) if match.group(2) is not None else match.group(3)
    size = {name: attributes[name] for name in SIZE_ATTRIBUTES
            if name in attributes and SIZE_VALUE.fullmatch(attributes[name])}
    placement = 'width="100%" height="100%"'
    box = size.get("viewBox", "").replace(",", " ").split()
    if len(box) == 4 and all(re.fullmatch(r"[+-]?[\d.]+(?:e[+-]?\d+)?", number) for number in box):
        placement = 'x="{}" y="{}" width="{}" height="{}"'.format(*box)
    if "preserveAspectRatio" in size:
        placement += f' preserveAspectRatio="{size["preserveAspectRatio"]}"'
    root_size = "".join(f' {name}="{value}"' for name, value in size.items())
    href = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
    return (f'<svg xmlns="{SVG}"{root_size}><image {placement} href="{href}"/></svg>\n').encode("ascii")
