"""The Python allow-list (cs336_lectures/runtime/render/sanitize.py) against the cases of the viewer's
(viewer/js/sanitize.js, tests/runtime/server/test_faults_web.py): the same attacks lose what can run or load,
and what our renderer makes comes out as the browser reads it unfiltered, in both."""

from __future__ import annotations

import re

import pytest

from cs336_lectures.runtime.notebooks.export import build_notebook
from cs336_lectures.runtime.render.rendering import render_markdown, render_verbatim
from cs336_lectures.runtime.render.sanitize import sanitized_html
from test_faults_web import ACTIVE, HOSTILE_HTML, RENDERER_MARKDOWN
from static_site import VIEWER, StaticSite
from trace_builders import TraceBuilder, markdown

# Anything that could run or load active content, written as HTML.
ACTIVE_MARKUP = re.compile(r"<(script|iframe|object|embed|frame|svg|base|meta|form|input|style|noscript|details|video"
                           r"|source)\b|\son\w+\s*=|=\"\s*javascript|data:text|url\(", re.IGNORECASE)


@pytest.mark.parametrize("attack", HOSTILE_HTML)
def test_every_attack_of_the_viewers_cases_loses_what_can_run(attack):
    assert not ACTIVE_MARKUP.search(sanitized_html(attack))


def test_what_is_allowed_stays():
    assert sanitized_html('<p onclick="x()">Hi <script>x()</script></p>') == "<p>Hi </p>"
    assert sanitized_html('<td style="text-align:right" onmouseover="x()">cell</td>') == (
        '<td style="text-align:right">cell</td>')
    assert sanitized_html('<a class="js-link" href="javascript:x()">text</a>') == '<a class="js-link">text</a>'
    assert sanitized_html('<a href="java&#x09;script:x()">tab</a>') == "<a>tab</a>"
    assert sanitized_html('<a href="https://example.org/?a=1&amp;b=2" rel="noopener" target="_blank">x</a>') == (
        '<a href="https://example.org/?a=1&amp;b=2" rel="noopener" target="_blank">x</a>')
    assert sanitized_html('<img src="data:image/png;base64,AAAA" alt="a &quot;dot&quot;">') == (
        '<img src="data:image/png;base64,AAAA" alt="a &quot;dot&quot;">')
    assert sanitized_html("<p>1 &lt; 2 <b>bold</b> <!-- gone --></p>") == "<p>1 &lt; 2 bold </p>"
    assert sanitized_html("<p><em>unclosed") == "<p><em>unclosed</em></p>"  # nothing left open for later HTML


def test_a_hostile_version_1_trace_exports_sanitised_html(tmp_path):
    """A version-1 trace keeps a markdown rendering only as HTML: the notebook shows it filtered."""
    source = "from cs336_lectures import text\n\n\ndef main():\n    note = 'x'\n    text(note)\n"
    builder = TraceBuilder("hostile")
    file = builder.file("lectures/hostile.py", source)
    main = builder.call(builder.function(file, "main", 4))
    builder.step(main, 5, v={"note": "x"})
    builder.step(main, 6, r=[markdown(html) for html in HOSTILE_HTML] + [markdown("<p>kept <em>text</em></p>")])
    notebook = build_notebook(builder.build(), tmp_path)
    shown = [output["data"]["text/html"] for cell in notebook.cells for output in cell.get("outputs", [])
             if "text/html" in output.get("data", {})]
    assert len(shown) == len(HOSTILE_HTML) + 1 and shown[-1] == "<p>kept <em>text</em></p>"
    assert not any(ACTIVE_MARKUP.search(html) for html in shown)
    assert "a javascript: link" in shown[HOSTILE_HTML.index(next(h for h in HOSTILE_HTML if "js-link\"" in h))]


@pytest.mark.browser
def test_the_browser_reads_python_and_javascript_results_alike(browser):
    """Renderer output passes both unchanged (as the browser parses it); each attack, cleaned by
    Python, has nothing active once a browser parses it, like the viewer's own result."""
    fragments = [render_markdown(RENDERER_MARKDOWN)[0], render_verbatim("a < b & c")]  # every construct
    context = browser.new_context()
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    try:
        with StaticSite(VIEWER) as site:
            page.goto(site.url + "index.html")
            results = page.evaluate("""async ([fragments, cleaned, attacks, attacksCleaned, active]) => {
                const { sanitizedFragment } = await import('./js/sanitize.js');
                const parsed = (html) => { const t = document.createElement('template'); t.innerHTML = html; return t.innerHTML; };
                const serialized = (fragment) => { const d = document.createElement('div'); d.append(fragment); return d.innerHTML; };
                const live = (html) => { const d = document.createElement('div'); d.innerHTML = html; document.body.append(d); return d; };
                const changed = fragments.map((html, i) => [parsed(cleaned[i]) !== parsed(html),
                                                             serialized(sanitizedFragment(html)) !== parsed(html)]);
                const activeAfter = attacksCleaned.map((html) => {
                    const d = live(html);
                    return d.querySelectorAll(active).length
                        + Array.from(d.querySelectorAll('*')).filter((n) => Array.from(n.attributes).some((a) => a.name.startsWith('on'))).length;
                });
                const sameText = attacks.map((html, i) => sanitizedFragment(html).textContent === live(attacksCleaned[i]).textContent);
                return { changed, activeAfter, sameText };
            }""", [fragments, [sanitized_html(html) for html in fragments], HOSTILE_HTML,
                   [sanitized_html(html) for html in HOSTILE_HTML], ACTIVE])
    finally:
        context.close()
    assert [i for i, (python, javascript) in enumerate(results["changed"]) if python or javascript] == []
    assert results["activeAfter"] == [0] * len(HOSTILE_HTML)
    assert page.dialogs == []
    differing = [HOSTILE_HTML[i] for i, same in enumerate(results["sameText"]) if not same]
    assert differing == [], differing


def test_raw_html_in_a_trace_s_markdown_source_is_escaped_for_jupyter():
    """Our renderer escapes raw HTML in lecture text; Jupyter would run it, so the notebook escapes it
    too, and leaves code, formulas, autolinks and a lone `<` as they are."""
    from cs336_lectures.runtime.notebooks.outputs import jupyter_markdown, rendering_bundle

    source = "Hi <img src=x onerror=alert(1)> and `<b>code</b>`, $a<b$, 1 < 2, <https://example.org>\n\n<script>x()</script>"
    bundle, _ = rendering_bundle({"type": "markdown", "html": "", "headings": [], "source": source}, bytes, str)
    assert bundle["text/markdown"] == jupyter_markdown(source) == (
        "Hi &lt;img src=x onerror=alert(1)> and `<b>code</b>`, $a<b$, 1 < 2, <https://example.org>\n\n"
        "&lt;script>x()&lt;/script>")
    assert jupyter_markdown("No HTML: 1 < 2 and $x < y$ cost $5") == "No HTML: 1 < 2 and $x < y$ cost \\$5"
