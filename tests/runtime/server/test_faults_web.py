"""Fault injection, the web half: what a hostile trace, a hostile asset, a hostile folder of
traces and a hostile HTTP client can do to a site and to the local server (issue 10).

Each test reproduces an attack or an edge the code once got wrong, or one that is refused
today and must stay refused. Browser tests run Debian's Chromium with the page's own
Content-Security-Policy in force (no bypass) and a dialog listener: any script a trace
smuggles in would call alert(). All traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.runtime.server import http_server as server_module
from cs336_lectures.runtime.render.assets import AssetStore
from cs336_lectures.runtime.server.source_files import BACKUPS_KEPT, save_source
from cs336_lectures.runtime.render.passive_svg import active_content, make_passive, wrap_as_image
from cs336_lectures.runtime.render.rendering import highlight_lines, render_markdown, render_verbatim
from cs336_lectures.runtime.publish.site import CONTENT_SECURITY_POLICY, build_index, write_site as build_site
from test_server import GOOD_LECTURE, put_trace, request, serve, workspace  # noqa: F401 (fixtures)
from test_site import sample_trace
from static_site import ROOT, VIEWER, StaticSite, write_site
from trace_builders import TraceBuilder, markdown

# --- hostile input ----------------------------------------------------------------------------

# Markup a crafted trace may carry where the viewer inserts pre-rendered HTML. Each would run
# alert() if it reached the page unfiltered on a host without a policy.
HOSTILE_HTML = [
    '<img src="nowhere.png" onerror="alert(\'img onerror\')">',
    '<iframe src="javascript:alert(\'iframe\')"></iframe>',
    '<a class="js-link" href="javascript:alert(\'link\')">a javascript: link</a>',
    '<a class="js-link-case" href="  JaVaScRiPt:alert(\'case\')">mixed case</a>',
    '<a class="js-link-tab" href="java&#x09;script:alert(\'tab\')">tab inside</a>',
    '<a class="data-link" href="data:text/html,&lt;script&gt;alert(\'data\')&lt;/script&gt;">a data: page</a>',
    '<svg><script>alert("svg script")</script></svg>',
    '<svg onload="alert(\'svg onload\')"></svg>',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert("mxss")></style></mglyph></table></mtext></math>',
    '<math href="javascript:alert(\'math href\')"><mi>x</mi></math>',
    '<details open ontoggle="alert(\'details\')"><summary>s</summary></details>',
    '<object data="javascript:alert(\'object\')"></object>',
    '<embed src="javascript:alert(\'embed\')">',
    '<form action="javascript:alert(\'form\')"><button id="form-button">go</button></form>',
    '<p style="background-image: url(javascript:alert(\'style\'))">styled</p>',
    '<input autofocus onfocus="alert(\'autofocus\')">',
    '<video><source onerror="alert(\'video\')"></video>',
    '<noscript><p title="</noscript><img src=x onerror=alert(\'noscript\')>"></noscript>',
    '<table><tr><td style="text-align:right" onmouseover="alert(\'cell\')">cell</td></tr></table>',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(\'refresh\')">',
    '<base href="http://evil.example/">',
    '<!--<img src=x onerror=alert("comment")>-->',
    '<img src="x" srcset="y 1x" onload="alert(\'load\')" onerror="alert(\'srcset\')">',
    # The same attacks in other forms: upper case, entities, a fragment after the scheme, a second declaration.
    '<IMG SRC="nowhere.png" ONERROR="alert(\'upper img\')">',
    '<SCRIPT>alert("upper script")</SCRIPT>',
    '<a class="js-link-entity" href="&#106;avascript&#58;alert(\'entity\')">entity</a>',
    '<a class="js-link-fragment" href="javascript:alert(\'fragment\')//#https://example.org/">fragment</a>',
    '<table><tr><th style="text-align:right; background-image:url(javascript:alert(\'th\'))">head</th></tr></table>',
    '<table><tr><th style="TEXT-ALIGN:LEFT" class="upper-style">upper</th></tr></table>',
]
# Highlighted source lines are inserted as HTML too (files[].html).
HOSTILE_LINES = [
    '<img src="nowhere.png" onerror="alert(\'line img\')">',
    '</span></div><script>alert("line script")</script>',
    '<span class="tok-k" onclick="alert(\'span\')">def</span>',
    '<a class="line-link" href="javascript:alert(\'line link\')">line link</a>',
    '<svg><animate onbegin="alert(\'animate\')" attributeName="x" dur="1s"/></svg>',
]
EVIL_TEXT = '<img src=x onerror="alert(\'text\')">'
# Selectors that match anything that can run or load active content, in the lecture's DOM.
ACTIVE = "script, iframe, object, embed, frame, svg, base, meta, form, input, [href^='javascript' i], [src^='javascript' i]"


def hostile_trace() -> dict:
    """A trace whose every HTML-carrying field holds an attack; titles and texts hold markup too."""
    source = "".join(f"line_{i} = {i}\n" for i in range(len(HOSTILE_LINES) + 2))
    builder = TraceBuilder(EVIL_TEXT)
    file = builder.file("lectures/hostile.py", source)
    builder.files[file]["html"][: len(HOSTILE_LINES)] = HOSTILE_LINES
    main = builder.call(builder.function(file, EVIL_TEXT, 1))
    builder.step(main, 1, r=[markdown(html, [[2, EVIL_TEXT, "x"]]) for html in HOSTILE_HTML],
                 v={"note": EVIL_TEXT}, o=EVIL_TEXT)
    builder.step(main, 2, r=[{"type": "image", "src": "javascript:alert('image src')", "alt": EVIL_TEXT},
                             {"type": "link", "title": EVIL_TEXT, "url": "javascript:alert('link url')"}])
    for line in range(3, len(HOSTILE_LINES) + 3):
        builder.step(main, line)
    return builder.build()


def strip_policy(root: Path) -> None:
    """Remove the <meta> policy from a site's index.html: the sanitiser alone must then suffice."""
    index = root / "index.html"
    html, count = re.subn(r'\s*<meta http-equiv="Content-Security-Policy"[^>]*>', "", index.read_text())
    assert count == 1
    index.write_text(html)


@pytest.fixture
def strict_page(browser):
    """A page with the site's own Content-Security-Policy in force and every dialog recorded."""
    context = browser.new_context()
    page = context.new_page()
    page.dialogs = []

    def record(dialog) -> None:
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    yield page
    context.close()


def settle(page) -> None:
    """Load every image, off screen ones too, and wait until each has loaded or failed, so any
    onerror/onload handler would have run."""
    page.evaluate("""() => Promise.all(Array.from(document.images, (img) => {
        img.loading = 'eager';
        return img.complete ? null : new Promise((done) => {
            img.addEventListener('load', done); img.addEventListener('error', done); });
    }))""")  # an inline onerror / onload is the first listener of its event: it has run by then


# --- item 6: pre-rendered HTML from a trace -----------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("policy", ["with the page's policy", "with the sanitiser alone"])
def test_a_hostile_trace_runs_no_script_on_a_static_host(strict_page, tmp_path, policy):
    root = write_site(tmp_path, {"hostile": hostile_trace()})
    if policy == "with the sanitiser alone":
        strip_policy(root)
    trace = hostile_trace()
    page = strict_page
    with StaticSite(root) as site:
        page.goto(site.url + "index.html")
        page.locator(".trace-card").first.wait_for()
        page.goto(site.url + f"index.html?trace=hostile&step={len(trace['steps']) - 1}")
        page.locator(".r-markdown").first.wait_for()
        settle(page)
        lecture = page.locator("#lecture-view")
        assert lecture.locator(".r-markdown").count() == len(HOSTILE_HTML)
        assert lecture.locator(ACTIVE).count() == 0
        handlers = page.evaluate("""() => Array.from(document.querySelectorAll('#lecture-view *'))
            .flatMap((node) => Array.from(node.attributes).filter((a) => a.name.startsWith('on')).map((a) => a.name))""")
        assert handlers == []
        for link in (".js-link", ".js-link-case", ".js-link-tab", ".data-link", ".line-link", ".js-link-entity",
                     ".js-link-fragment"):
            page.click(link)
        page.hover("td")
        settle(page)
        # What was allowed stays: text of links and cells, the table cell's alignment.
        assert lecture.locator(".js-link").inner_text() == "a javascript: link"
        assert lecture.locator("td").get_attribute("style") == "text-align:right"
        assert lecture.locator("th").first.get_attribute("style") is None  # a second declaration loses the whole style
        assert lecture.locator("th.upper-style").get_attribute("style") == "TEXT-ALIGN:LEFT"
        assert page.evaluate("location.pathname") == "/index.html"
    assert page.dialogs == []


def malformed_traces() -> dict[str, str]:
    """Broken traces whose broken parts hold markup: the viewer quotes them in its error messages."""
    good = hostile_trace()
    bad_step = json.loads(json.dumps(good))
    bad_step["steps"][0] = [EVIL_TEXT, EVIL_TEXT]
    bad_files = json.loads(json.dumps(good))
    bad_files["files"] = [{"path": EVIL_TEXT, "source": EVIL_TEXT, "html": EVIL_TEXT, "hidden": EVIL_TEXT}]
    bad_call = json.loads(json.dumps(good))
    bad_call["calls"][0] = [EVIL_TEXT, EVIL_TEXT]
    bad_renderings = json.loads(json.dumps(good))
    bad_renderings["steps"][0][2]["r"] = [{"type": EVIL_TEXT}, EVIL_TEXT, {"type": "markdown", "html": ["<img>"]},
                                          {"type": "markdown", "html": EVIL_TEXT, "style": {"color": EVIL_TEXT}}]
    return {
        "bad_format": json.dumps(dict(good, format=EVIL_TEXT)),
        "bad_version": json.dumps(dict(good, version=EVIL_TEXT)),
        "a_string": json.dumps(EVIL_TEXT),
        "truncated": json.dumps(good)[:2000],
        "bad_step": json.dumps(bad_step),
        "bad_files": json.dumps(bad_files),
        "bad_call": json.dumps(bad_call),
        "bad_renderings": json.dumps(bad_renderings),
    }


@pytest.mark.browser
def test_malformed_traces_and_a_hostile_index_run_no_script(strict_page, tmp_path):
    root = write_site(tmp_path, malformed_traces())
    entry = {"name": EVIL_TEXT, "file": EVIL_TEXT, "title": EVIL_TEXT, "num_steps": EVIL_TEXT,
             "created": EVIL_TEXT, "status": EVIL_TEXT, "message": EVIL_TEXT}
    (root / "traces" / "index.json").write_text(json.dumps({"traces": [entry, dict(entry, status="invalid")]}))
    page = strict_page
    with StaticSite(root) as site:
        page.goto(site.url + "index.html")
        page.locator("#index-view").wait_for()
        settle(page)
        assert EVIL_TEXT in page.locator("#index-view").inner_text()  # shown, as text
        for name in [*malformed_traces(), "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"]:
            page.goto(site.url + f"index.html?trace={name}")
            page.locator("#failure:visible, .code .line:visible").first.wait_for()
            settle(page)
            assert page.locator("main").locator(ACTIVE).count() == 0, name
    assert page.dialogs == []


@pytest.mark.browser
def test_the_page_policy_stops_inline_script_that_gets_past_everything(strict_page, tmp_path):
    """Markup inserted behind the sanitiser's back (here by the test itself) still cannot script."""
    root = write_site(tmp_path, {"demo": sample_trace("demo")})
    page = strict_page
    with StaticSite(root) as site:
        page.goto(site.url + "index.html")
        page.locator(".trace-card").first.wait_for()
        violation = page.evaluate("""() => new Promise((done) => {
            document.addEventListener('securitypolicyviolation', (event) => done(event.violatedDirective), { once: true });
            document.body.insertAdjacentHTML('beforeend', '<img src="nowhere.png" onerror="alert(1)">');
        })""")
    assert violation.startswith("script-src")
    assert page.dialogs == []


def test_built_site_and_server_carry_the_same_policy(serve, workspace):
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', (VIEWER / "index.html").read_text())
    assert meta is not None and meta.group(1) == CONTENT_SECURITY_POLICY
    put_trace(workspace)
    out = workspace / "site"
    build_site([workspace / "traces" / "lecture_t.json"], out)
    assert f'content="{CONTENT_SECURITY_POLICY}"' in (out / "index.html").read_text()
    # The server sends the page's policy plus what only a header can say.
    server = serve("lectures/lecture_t.py")
    header = request(server, "GET", "/")[2].getheader("Content-Security-Policy")
    directives = {part.strip() for part in header.split(";")}
    assert directives == {part.strip() for part in CONTENT_SECURITY_POLICY.split(";")} | {"frame-ancestors 'none'"}


RENDERER_MARKDOWN = """# Every construct

Text with *emphasis*, **strong**, `code`, ~~struck~~ and a [link](https://example.org/paper "Paper"),
a [relative link](notes.html), an [anchor](#every-construct), a [mail](mailto:someone@example.org)
and an image ![a plot](assets/0123456789abcdef.png "Plot").

> A quote with $\\sqrt{x^2 + 1}$ and $\\hat{y}_t = \\sum_{i=1}^{n} w_i x_i^{2}$.

$$
\\frac{\\partial L}{\\partial w} = \\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}, \\quad \\mathbf{W} \\in \\mathbb{R}^{d \\times k}
$$

$$
E = mc^2
$$ (energy)

A formula that cannot render: $x^$, and display math mid-sentence $$E = mc^2$$ too.

1. first
2. second

- a
- b

| a | b |
|--:|:--|
| 1 | 2 |

```python
def f(x):
    return x + 1
```

---
Raw <b>html</b> is escaped.
"""


@pytest.fixture(scope="module")
def shipped_traces(tmp_path_factory) -> Path:
    """Traces of the shipped lectures, written by the real tracer."""
    out = tmp_path_factory.mktemp("shipped")
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "lectures/lecture_01.py",
                           "lectures/lecture_02.py", "-o", str(out), "--quiet"],
                          cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.browser
def test_the_sanitiser_keeps_everything_our_renderer_makes(strict_page, tmp_path, shipped_traces):
    """Every markdown rendering and highlighted line of the shipped lectures, plus markdown using
    every construct, comes out of the sanitiser exactly as the browser parses it unfiltered."""
    fragments = [render_markdown(RENDERER_MARKDOWN)[0], render_verbatim("a < b & c")]
    lines = highlight_lines("def f(x):  # 'quoted' \"double\" <tag> & more\n    return f'{x!r}' + '\\n'\n")
    for name in ("lecture_01", "lecture_02"):
        trace = json.loads((shipped_traces / f"{name}.json").read_text())
        lines += [line for file in trace["files"] for line in file["html"]]
        fragments += [rendering["html"] for step in trace["steps"] if len(step) > 2
                      for rendering in step[2].get("r", []) if rendering["type"] == "markdown"]
    joined = "".join(fragments)
    for construct in ("<math", "<mfrac", "<table", 'href="https://example.org/paper"', 'href="mailto:',
                      "<img src=", "<pre", "<s>", "math-error", 'class="math block"', 'id="energy"'):
        assert construct in joined, construct
    assert any('class="tok-' in line for line in lines)
    root = write_site(tmp_path, {"demo": sample_trace("demo")})
    page = strict_page
    with StaticSite(root) as site:
        page.goto(site.url + "index.html")
        page.locator(".trace-card").first.wait_for()
        lost = page.evaluate("""async ([fragments, lines]) => {
            const { sanitizedFragment, sanitizedHtml } = await import('./js/sanitize.js');
            const parsed = (html) => { const t = document.createElement('template'); t.innerHTML = html; return t.innerHTML; };
            const serialized = (fragment) => { const d = document.createElement('div'); d.append(fragment); return d.innerHTML; };
            return [
                ...fragments.filter((html) => serialized(sanitizedFragment(html)) !== parsed(html)),
                ...lines.filter((html) => sanitizedHtml(html) !== html),
            ];
        }""", [fragments, lines])
    assert lost == []
    assert page.dialogs == []


@pytest.mark.browser
def test_a_shipped_lecture_shows_math_code_and_plots_under_the_policy(strict_page, tmp_path, shipped_traces):
    index = build_site([shipped_traces / "lecture_01.json", shipped_traces / "lecture_02.json"], tmp_path / "site")
    assert [entry["status"] for entry in index["traces"]] == ["ok", "ok"]
    page = strict_page
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    trace = json.loads((shipped_traces / "lecture_02.json").read_text())
    with StaticSite(tmp_path / "site") as site:
        page.goto(site.url + f"index.html?trace=lecture_02&step={len(trace['steps']) - 1}")
        page.locator(".r-markdown math").first.wait_for(state="attached")
        settle(page)
        assert page.locator(".r-markdown math").count() > 5
        assert page.locator(".src .tok-k").count() > 10
        plots = page.locator("img.r-plot")
        assert plots.count() > 0
        assert all(width > 0 for width in page.evaluate(
            "() => Array.from(document.querySelectorAll('img.r-plot'), (img) => img.naturalWidth)"))
    assert not [error for error in errors if "Content Security Policy" in error]
    assert page.dialogs == []


# --- item 7: SVG assets -----------------------------------------------------------------------


RED_SVG_WITH_SCRIPT = (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">'
                       b'<rect width="40" height="20" fill="#ff0000"/><script>alert("svg asset")</script></svg>')
HOSTILE_SVGS = {
    "script": RED_SVG_WITH_SCRIPT,
    "onload": b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="4" height="4"/></svg>',
    "link": (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
             b'<a xlink:href="javascript:alert(1)"><rect width="4" height="4"/></a></svg>'),
    "foreign object": (b'<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><img xmlns="http://www.w3.org/1999/xhtml" '
                       b'src="x" onerror="alert(1)"/></foreignObject></svg>'),
    "xslt": b'<?xml-stylesheet type="text/xsl" href="x.xsl"?><svg xmlns="http://www.w3.org/2000/svg"/>',
    "entities": b'<!DOCTYPE svg [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>',
    "animation": (b'<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" to="javascript:alert(1)"/>'
                  b'<rect width="4" height="4"/></a></svg>'),
    "external style": b'<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(http://evil.example/x.css);</style></svg>',
    "external fill": b'<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: url(http://evil.example/#p)"/></svg>',
    "not xml": b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>',
    # The same attacks in other forms: a fragment on an external URL, upper case, xlink, entities.
    "external image with a fragment": (b'<svg xmlns="http://www.w3.org/2000/svg"><image '
                                       b'href="https://evil.example/x.svg#part" width="4" height="4"/></svg>'),
    "xlink use of an external fragment": (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                                          b'<use xlink:href="https://evil.example/sprites.svg#icon"/></svg>'),
    "relative link with a fragment": b'<svg xmlns="http://www.w3.org/2000/svg"><use href="other.svg#icon"/></svg>',
    "data page in an image": (b'<svg xmlns="http://www.w3.org/2000/svg"><image '
                              b'href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"/></svg>'),
    "data image on use": b'<svg xmlns="http://www.w3.org/2000/svg"><use href="data:image/svg+xml;base64,PHN2Zy8+"/></svg>',
    "upper-case handler": b'<svg xmlns="http://www.w3.org/2000/svg"><rect ONLOAD="alert(1)" width="4" height="4"/></svg>',
    "mixed-case handler": b'<svg xmlns="http://www.w3.org/2000/svg"><rect onMouseOver="alert(1)"/></svg>',
    "upper-case script": b'<svg xmlns="http://www.w3.org/2000/svg"><SCRIPT>alert(1)</SCRIPT></svg>',
    "element in no namespace": b'<svg width="4"><script>alert(1)</script></svg>',
    "html element": b'<svg xmlns="http://www.w3.org/2000/svg"><html:b xmlns:html="http://www.w3.org/1999/xhtml"/></svg>',
    "foreign attribute": b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:ev="http://www.w3.org/2001/xml-events"><rect ev:event="click"/></svg>',
    "entity only": b'<!DOCTYPE svg [<!ENTITY a "x">]><svg xmlns="http://www.w3.org/2000/svg"/>',
    "external fill with a fragment, quoted": (b'<svg xmlns="http://www.w3.org/2000/svg"><rect '
                                              b'style="fill: url( \'https://evil.example/p.svg#g\' )"/></svg>'),
    "second declaration loads": (b'<svg xmlns="http://www.w3.org/2000/svg"><rect '
                                 b'style="fill: url(#ok); stroke: url(https://evil.example/#p)"/></svg>'),
    "upper-case import": b'<svg xmlns="http://www.w3.org/2000/svg"><style>@IMPORT "http://evil.example/x.css";</style></svg>',
    "escaped stylesheet": b'<svg xmlns="http://www.w3.org/2000/svg"><style>rect { fill: u\\72l(http://evil.example/) }</style></svg>',
    "expression": b'<svg xmlns="http://www.w3.org/2000/svg"><rect style="width: EXPRESSION(alert(1))"/></svg>',
    "javascript in a style value": b'<svg xmlns="http://www.w3.org/2000/svg"><rect fill="JavaScript:alert(1)"/></svg>',
    "markup in a stylesheet": (b'<svg xmlns="http://www.w3.org/2000/svg"><style>&lt;/style&gt;&lt;script&gt;'
                               b'alert(1)&lt;/script&gt;</style></svg>'),
}
# Static drawings that must stay as they are: links and fills within the drawing, embedded images, metadata.
STATIC_SVGS = {
    "internal use": (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                     b'<defs><rect id="r" width="4" height="4"/></defs><use xlink:href="#r"/><use href="#r"/></svg>'),
    "internal fill": (b'<svg xmlns="http://www.w3.org/2000/svg"><defs><linearGradient id="g"/></defs>'
                      b'<style>rect { fill: url(#g) }</style><rect style="fill: url( \'#g\' )" fill="url(#g)"/></svg>'),
    "embedded png": (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                     b'<image xlink:href="DATA:image/png;base64,iVBORw0KGgo=" width="4" height="4"/></svg>'),
    "metadata": (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
                 b'xmlns:cc="http://creativecommons.org/ns#"><metadata><rdf:RDF><cc:Work rdf:about="x"/></rdf:RDF>'
                 b'</metadata><text xml:space="preserve">on top</text></svg>'),
    "text around a stylesheet": (b'<svg xmlns="http://www.w3.org/2000/svg"><text>a \\ b &lt; c</text>'
                                 b'<style>rect { fill: red }</style><text>see url(https://example.org/)</text></svg>'),
    "text right after a stylesheet": (b'<svg xmlns="http://www.w3.org/2000/svg"><style>rect { fill: red }</style>'
                                      b'see url(https://example.org/) \\ <rect/></svg>'),
    "a plain doctype": (b'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">'
                        b'<svg xmlns="http://www.w3.org/2000/svg"><rect width="4" height="4" class="one"/></svg>'),
}


@pytest.mark.parametrize("name", HOSTILE_SVGS)
def test_an_svg_that_could_act_is_stored_as_a_picture_of_itself(tmp_path, name):
    data = HOSTILE_SVGS[name]
    assert active_content(data) is not None
    padded = data.replace(b"<svg ", b"<svg data-padding='" + b"x" * 9000 + b"' ", 1)  # over the inline limit
    reference = AssetStore(tmp_path / "assets", tmp_path / "cache").add(padded, "svg")
    stored = (tmp_path / reference).read_bytes()
    assert active_content(stored) is None
    embedded = re.search(rb'href="data:image/svg\+xml;base64,([^"]+)"', stored).group(1)
    assert base64.b64decode(embedded) == padded  # nothing lost: the original is inside, as an image
    assert make_passive(stored) == stored


@pytest.mark.parametrize("name", STATIC_SVGS)
def test_a_static_svg_is_kept_byte_for_byte(name):
    data = STATIC_SVGS[name]
    assert active_content(data) is None
    assert make_passive(data) is data


def test_what_makes_an_svg_active_is_named():
    assert active_content(HOSTILE_SVGS["external image with a fragment"]) == (
        "a link to 'https://evil.example/x.svg#part' on <image>")
    assert active_content(HOSTILE_SVGS["upper-case handler"]) == "event handler ONLOAD= on <rect>"
    assert active_content(HOSTILE_SVGS["element in no namespace"]) == "element <svg> (no namespace)"
    assert active_content(HOSTILE_SVGS["second declaration loads"]) == "style= on <rect>: url(https://evil.example/#p)"
    assert active_content(HOSTILE_SVGS["upper-case import"]) == "the stylesheet: '@IMPORT'"
    assert active_content(HOSTILE_SVGS["entity only"]) == "a DOCTYPE with declarations of its own"
    assert active_content(HOSTILE_SVGS["xslt"]) == "processing instruction <?xml-stylesheet?>"
    assert active_content(HOSTILE_SVGS["foreign attribute"]) == "attribute event= in namespace http://www.w3.org/2001/xml-events"
    assert active_content(b'<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>').startswith("not well-formed XML (")
    assert active_content(b'<svg xmlns="http://www.w3.org/2000/svg"><rect/>').startswith("not well-formed XML (")  # cut short
    far = "https://evil.example/" + "a" * 100
    assert active_content(f'<svg xmlns="http://www.w3.org/2000/svg"><use href="{far}"/></svg>'.encode()) == (
        f"a link to {far[:60]!r} on <use>")
    assert active_content(f'<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url({far})"/></svg>'.encode()) == (
        f"fill= on <rect>: url({far[:60]})")


def test_the_svg_wrapper_keeps_the_drawings_size_and_nothing_else_of_its_root():
    def wrapped(data: bytes, root: str, image: str) -> bytes:
        href = "data:image/svg+xml;base64," + base64.b64encode(data).decode("ascii")
        return f'<svg xmlns="http://www.w3.org/2000/svg"{root}><image {image} href="{href}"/></svg>\n'.encode("ascii")

    sized = (b'<svg xmlns="http://www.w3.org/2000/svg" data-note="\xff" width="40" height=\'20\' viewBox="0,0 40 20" '
             b'preserveAspectRatio="xMidYMid meet" onload="alert(1)" style="x:url(y)"><rect/></svg>')
    assert wrap_as_image(sized) == wrapped(
        sized, ' width="40" height="20" viewBox="0,0 40 20" preserveAspectRatio="xMidYMid meet"',
        'x="0" y="0" width="40" height="20" preserveAspectRatio="xMidYMid meet"')
    exponent = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1.5 0 1e2 5e+1"/>'
    assert wrap_as_image(exponent) == wrapped(exponent, ' viewBox="-1.5 0 1e2 5e+1"',
                                              'x="-1.5" y="0" width="1e2" height="5e+1"')
    for odd_box in (b"0 0 40 20 5", b"0 0 40", b"0 0 4E1 20", b"a b c d"):
        odd = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="' + odd_box + b'"/>'
        assert wrap_as_image(odd) == wrapped(odd, f' viewBox="{odd_box.decode()}"', 'width="100%" height="100%"')
    hostile_size = b'<svg xmlns="http://www.w3.org/2000/svg" width="4&quot; onload=&quot;x" height="1"/>'
    assert wrap_as_image(hostile_size) == wrapped(hostile_size, ' height="1"', 'width="100%" height="100%"')
    not_svg = b"<html><body>hello</body></html>"
    assert wrap_as_image(not_svg) == wrapped(not_svg, "", 'width="100%" height="100%"')


def test_matplotlib_plots_are_kept_byte_for_byte():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from cs336_lectures.runtime.lecture.primitives import figure_svg

    figure, (left, right) = plt.subplots(1, 2)
    left.plot([1, 2, 3], [3, 1, 2], label="loss")
    left.set_title("Loss <and> 'quotes' & more")
    left.legend()
    right.imshow(np.arange(16).reshape(4, 4))  # embedded as a PNG data: image
    right.fill_between([0, 1, 2], [0, 1, 0], hatch="//")
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # real <text> elements
        data = figure_svg(figure)
    plt.close(figure)
    assert b"<image" in data and b"<text" in data
    assert active_content(data) is None
    assert make_passive(data) is data


@pytest.mark.browser
def test_a_hostile_svg_asset_opened_on_its_own_runs_no_script_and_still_shows(strict_page, tmp_path):
    (tmp_path / "raw.svg").write_bytes(RED_SVG_WITH_SCRIPT)
    (tmp_path / "passive.svg").write_bytes(make_passive(RED_SVG_WITH_SCRIPT))
    (tmp_path / "show.html").write_text('<!doctype html><img id="picture" src="passive.svg">')
    page = strict_page
    with StaticSite(tmp_path) as site:
        page.goto(site.url + "raw.svg")
        page.wait_for_load_state("load")
        assert page.dialogs == ["svg asset"]  # the attack is real
        page.dialogs.clear()
        page.goto(site.url + "passive.svg")
        page.wait_for_load_state("load")
        page.goto(site.url + "show.html")
        settle(page)
        # The picture is intact: its red fill, at its size, drawn through a canvas.
        pixel = page.evaluate("""() => {
            const img = document.getElementById('picture');
            const canvas = document.createElement('canvas');
            canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
            const context = canvas.getContext('2d');
            context.drawImage(img, 0, 0);
            return [img.naturalWidth, img.naturalHeight, ...context.getImageData(20, 10, 1, 1).data];
        }""")
    assert pixel == [40, 20, 255, 0, 0, 255]
    assert page.dialogs == []


def test_build_makes_svg_assets_passive_and_leaves_out_what_is_not_an_image(tmp_path, capsys):
    traces = tmp_path / "traces"
    (traces / "assets").mkdir(parents=True)
    (traces / "assets" / "0000000000000001.svg").write_bytes(RED_SVG_WITH_SCRIPT)
    (traces / "assets" / "0000000000000002.html").write_text("<script>alert(1)</script>")
    trace = sample_trace("demo", asset="assets/0000000000000001.svg")
    trace["steps"][1].append({"r": [{"type": "image", "src": "assets/0000000000000002.html", "alt": "page"}]})
    (traces / "demo.json").write_text(json.dumps(trace))
    out = tmp_path / "site"
    build_site([traces / "demo.json"], out)
    copied = (out / "traces" / "assets" / "0000000000000001.svg").read_bytes()
    assert active_content(copied) is None and copied == make_passive(RED_SVG_WITH_SCRIPT)
    assert not (out / "traces" / "assets" / "0000000000000002.html").exists()
    assert "assets/0000000000000002.html, which is not an image; left out" in capsys.readouterr().err


# --- item 9: links out of the traces folder -------------------------------------------------


def outside_trace(tmp_path: Path) -> Path:
    outside = tmp_path / "private"
    outside.mkdir()
    secret = sample_trace("outside", status="error")
    secret["header"]["title"] = "OUTSIDE SECRET TITLE"
    secret["header"]["message"] = "OUTSIDE SECRET MESSAGE"
    (outside / "secret.json").write_text(json.dumps(secret))
    (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\nOUTSIDE SECRET BYTES")
    return outside


def test_the_index_ignores_links_to_traces_outside_the_folder(tmp_path, serve, workspace):
    outside = outside_trace(tmp_path)
    traces = workspace / "traces"
    put_trace(workspace)
    (traces / "escape.json").symlink_to(outside / "secret.json")
    (traces / "loop.json").symlink_to(traces / "loop.json")
    (traces / "inside.json").symlink_to(traces / "lecture_t.json")  # a link within the folder is fine
    index = build_index(traces)
    assert [entry["name"] for entry in index["traces"]] == ["inside", "lecture_t"]
    assert "OUTSIDE SECRET" not in json.dumps(index)
    server = serve("lectures/lecture_t.py")
    status, body, _ = request(server, "GET", "/traces/index.json")
    assert status == 200 and b"OUTSIDE SECRET" not in body
    assert request(server, "GET", "/traces/loop.json")[0] == 404


def test_build_copies_no_asset_through_a_link_out_of_the_folder(tmp_path, capsys):
    outside = outside_trace(tmp_path)
    traces = tmp_path / "traces"
    (traces / "assets").mkdir(parents=True)
    (traces / "assets" / "0000000000000003.png").symlink_to(outside / "secret.png")
    (traces / "demo.json").write_text(json.dumps(sample_trace("demo", asset="assets/0000000000000003.png")))
    build_site([traces / "demo.json"], tmp_path / "site")
    assert not (tmp_path / "site" / "traces" / "assets" / "0000000000000003.png").exists()
    assert "is a link to a file outside the traces folder" in capsys.readouterr().err
    # The whole assets folder as a link out: the same.
    (traces / "assets" / "0000000000000003.png").unlink()
    (traces / "assets").rmdir()
    (traces / "assets").symlink_to(outside)
    (outside / "0000000000000003.png").write_bytes(b"\x89PNG\r\n\x1a\nOUTSIDE SECRET BYTES")
    build_site([traces / "demo.json"], tmp_path / "site")
    site_bytes = b"".join(path.read_bytes() for path in (tmp_path / "site").rglob("*") if path.is_file())
    assert b"OUTSIDE SECRET" not in site_bytes


# --- items 10-12: server edges ------------------------------------------------------------------


def raw_exchange(server, data: bytes, limit: float = 20) -> bytes:
    """Send raw bytes, then read until the server closes the connection (within `limit` seconds)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=limit) as connection:
        connection.sendall(data)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_an_overlong_path_segment_gets_a_reason(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for path in ("/" + "a" * 300, "/traces/" + "b" * 300 + ".json", "/js/" + "%41" * 300 + ".js",
                 "/traces/assets/" + "c" * 4000, "/" + "%C3%A9" * 200):
        status, body, _ = request(server, "GET", path)
        assert status == 404, path
        assert "longer than 255 bytes" in json.loads(body)["error"]


def test_a_deeply_nested_body_gets_a_reason(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    for body in (b"[" * 100_000 + b"]" * 100_000, b'{"source": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"):
        status, answer, _ = request(server, "POST", "/api/source?trace=lecture_t", body, token=server.token)
        assert status == 400
        assert json.loads(answer)["error"] == "the JSON body is nested too deeply"
    assert (workspace / "lectures" / "lecture_t.py").read_text() == GOOD_LECTURE


def test_a_body_holding_an_integer_past_the_digit_limit_gets_a_reason(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    body = b'{"source": "x = 1\\n", "base": null, "n": ' + b"9" * 5_000 + b"}"
    status, answer, _ = request(server, "POST", "/api/source?trace=lecture_t", body, token=server.token)
    assert status == 400 and json.loads(answer)["error"].startswith("expected a JSON body")
    assert (workspace / "lectures" / "lecture_t.py").read_text() == GOOD_LECTURE


@pytest.mark.parametrize("length, status, reason", [
    ("-5", 400, "is not a number of bytes"),
    ("+2", 400, "is not a number of bytes"),
    ("1_0", 400, "is not a number of bytes"),
    ("0x10", 400, "is not a number of bytes"),
    (str(6 * 1024 * 1024), 413, "at most"),
])
def test_a_bad_content_length_is_named_for_what_it_is(serve, workspace, length, status, reason):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    head = (f"POST /api/source?trace=lecture_t HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"X-CS336-Token: {server.token}\r\nContent-Length: {length}\r\n\r\n{{}}")
    response = raw_exchange(server, head.encode())
    assert response.startswith(f"HTTP/1.1 {status} ".encode())
    assert reason in response.decode()


def test_a_missing_content_length_is_required(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    head = f"POST /api/source?trace=lecture_t HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-CS336-Token: {server.token}\r\n\r\n"
    assert raw_exchange(server, head.encode()).startswith(b"HTTP/1.1 411 ")


def test_head_of_the_event_stream_is_headers_only(serve, workspace):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    response = raw_exchange(server, f"HEAD /api/events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"text/event-stream" in head
    assert body == b""  # and the connection closed instead of streaming


@pytest.fixture
def short_timeouts(monkeypatch):
    monkeypatch.setattr(server_module.RequestHandler, "timeout", 1.0)


def test_a_connection_that_never_finishes_its_headers_is_closed(serve, workspace, short_timeouts):
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    assert raw_exchange(server, f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()) == b""
    assert raw_exchange(server, b"") == b""  # connected, then silent
    # A body that stops short of its Content-Length is answered, not waited for.
    partial = (f"POST /api/source?trace=lecture_t HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
               f"X-CS336-Token: {server.token}\r\nContent-Length: 100\r\n\r\n{{\"source\"")
    response = raw_exchange(server, partial.encode())
    assert response.startswith(b"HTTP/1.1 408 ")
    assert b"the body did not arrive" in response
    assert request(server, "GET", "/api/info")[0] == 200  # and the server still serves


def test_paths_that_try_to_leave_the_served_folders(serve, workspace):
    """Variants beyond test_server's: double encoding, overlong UTF-8 dots, absolute-form targets,
    a symlinked assets folder, a symlink loop."""
    put_trace(workspace)
    (workspace / "traces" / "assets").symlink_to(workspace)
    (workspace / "viewer" / "loop").symlink_to(workspace / "viewer" / "loop")
    server = serve("lectures/lecture_t.py")
    for path in ("/%252e%252e/secret.txt", "/%c0%ae%c0%ae/secret.txt", "/traces/assets/secret.txt",
                 "/traces/%2e%2e%2fsecret.txt", "/.%2e/secret.txt", "/traces/.%2E/.%2E/secret.txt",
                 f"http://127.0.0.1:{server.port}/../secret.txt", "/loop/x", "/loop", "/%2Fsecret.txt",
                 "/traces/%5c..%5csecret.txt", "/traces/assets%00/../../secret.txt"):
        status, body, _ = request(server, "GET", path)
        assert status in (400, 403, 404), path
        assert b"outside the served folders" not in body


def test_refusals_that_must_stay_refusals(serve, workspace):
    """The token only in its header, the Host and the Origin exactly this server's."""
    put_trace(workspace)
    server = serve("lectures/lecture_t.py")
    port = server.port
    assert request(server, "POST", f"/api/retrace?trace=lecture_t&token={server.token}")[0] == 403
    assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token.upper())[0] == 403
    for host in (f"localhost.:{port}", f"evil@127.0.0.1:{port}", f"127.0.0.1:{port}.evil.example", f"127.1:{port}",
                 f"LOCALHOST:{port}x"):
        assert request(server, "GET", "/api/info", host=host)[0] == 403, host
    for origin in (f"http://127.0.0.1:{port}.evil.example", f"http://127.0.0.1:{port}/", f"http://localhost:{port}@evil.example",
                   "file://", f"http://[::ffff:7f00:1]:{port}x"):
        assert request(server, "POST", "/api/retrace?trace=lecture_t", token=server.token,
                       headers={"Origin": origin})[0] == 403, origin


# --- items 13-14: saving from the browser ------------------------------------------------------


def save(server, source: str) -> tuple[int, dict]:
    status, body, _ = request(server, "POST", "/api/source?trace=lecture_t", {"source": source}, token=server.token)
    return status, json.loads(body)


def test_saves_keep_the_lecture_mode_and_the_last_few_versions(serve, workspace):
    put_trace(workspace)
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.chmod(0o600)
    server = serve("lectures/lecture_t.py")
    versions = [GOOD_LECTURE] + [f"x = {n}\n" for n in range(1, BACKUPS_KEPT + 3)]
    for version in versions[1:]:
        assert save(server, version)[0] == 202
    assert lecture.read_text() == versions[-1]
    assert stat.S_IMODE(lecture.stat().st_mode) == 0o600
    kept = workspace / "backups"  # beside the traces, not beside the lecture
    backups = [kept / "lecture_t.py.bak"] + [kept / f"lecture_t.py.bak.{n}" for n in range(1, BACKUPS_KEPT)]
    assert [backup.read_text() for backup in backups] == versions[-2::-1][:BACKUPS_KEPT]
    assert {stat.S_IMODE(backup.stat().st_mode) for backup in backups} == {0o600}
    assert not (kept / f"lecture_t.py.bak.{BACKUPS_KEPT}").exists()
    assert sorted(path.name for path in kept.iterdir() if path.name.startswith(".")) == []
    assert sorted(path.name for path in lecture.parent.iterdir()) == ["lecture_t.py"]  # nothing for git to see


def test_a_save_that_cannot_be_written_changes_nothing(serve, workspace):
    put_trace(workspace)
    lecture = workspace / "lectures" / "lecture_t.py"
    server = serve("lectures/lecture_t.py")
    assert save(server, "x = 1\n")[0] == 202
    backup = workspace / "backups" / "lecture_t.py.bak"
    status, answer = save(server, "x = '\ud800'\n")  # a lone surrogate: no encoding can write it
    assert status == 400
    assert "cannot be written in utf-8" in answer["error"]
    assert lecture.read_text() == "x = 1\n"
    assert backup.read_text() == GOOD_LECTURE
    assert not backup.with_name("lecture_t.py.bak.1").exists()


LATIN_1_LECTURE = "# -*- coding: latin-1 -*-\ngreeting = 'café'\n"


def test_a_lecture_in_latin_1_is_read_and_saved_in_latin_1(serve, workspace):
    put_trace(workspace)
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.write_bytes(LATIN_1_LECTURE.encode("latin-1"))
    server = serve("lectures/lecture_t.py")
    status, body, _ = request(server, "GET", "/api/source?trace=lecture_t")
    assert status == 200 and json.loads(body)["source"] == LATIN_1_LECTURE
    edited = LATIN_1_LECTURE.replace("café", "naïve café")
    assert save(server, edited)[0] == 202
    assert lecture.read_bytes() == edited.encode("latin-1")
    assert (workspace / "backups" / "lecture_t.py.bak").read_bytes() == LATIN_1_LECTURE.encode("latin-1")
    status, answer = save(server, LATIN_1_LECTURE.replace("café", "€"))  # latin-1 has no euro sign
    assert status == 400 and "cannot be written in iso-8859-1" in answer["error"]
    assert lecture.read_bytes() == edited.encode("latin-1")
    # Changing the coding comment changes the encoding the file is written in.
    assert save(server, "# coding: utf-8\nprice = '€'\n")[0] == 202
    assert lecture.read_bytes() == "# coding: utf-8\nprice = '€'\n".encode("utf-8")


def test_a_byte_order_mark_survives_a_save(serve, workspace):
    put_trace(workspace)
    lecture = workspace / "lectures" / "lecture_t.py"
    lecture.write_bytes(b"\xef\xbb\xbfx = 1\n")
    server = serve("lectures/lecture_t.py")
    source = json.loads(request(server, "GET", "/api/source?trace=lecture_t")[1])["source"]
    assert source == "\ufeffx = 1\n"
    assert save(server, source.replace("1", "2"))[0] == 202
    assert lecture.read_bytes() == b"\xef\xbb\xbfx = 2\n"


def test_a_save_killed_half_way_leaves_nothing_the_next_save_keeps(tmp_path):
    """A pending backup left by a killed save (here, one made world-readable) is replaced, not reused."""
    lecture = tmp_path / "lecture.py"
    lecture.write_text("x = 1\n")
    lecture.chmod(0o600)
    backups = tmp_path / "backups"
    backups.mkdir()
    stale = backups / ".lecture.py.bak.pending"
    stale.write_text("half a file")
    stale.chmod(0o644)
    save_source(lecture, "x = 2\n", backups)
    assert not stale.exists()
    backup = backups / "lecture.py.bak"
    assert backup.read_text() == "x = 1\n" and stat.S_IMODE(backup.stat().st_mode) == 0o600
