"""viewer/js/sanitize.js, case by case in Chromium: what each allow-list rule keeps and drops, each
attack in several forms (case, entities, whitespace, several declarations, fragments on external
URLs). test_faults_web.py shows the same gate holding in the whole viewer; this file is fast enough
to run once per mutant (tests/mutation/js_mutants.py sets CS336_SANITIZE_JS to a mutated copy)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from static_site import VIEWER

pytestmark = pytest.mark.browser

SANITIZER = Path(os.environ.get("CS336_SANITIZE_JS", VIEWER / "js" / "sanitize.js"))

# (html, what sanitizedFragment leaves of it, serialized)
FRAGMENTS = [
    # table cells keep an alignment and nothing else
    ('<td style="text-align:right">c</td>', '<td style="text-align:right">c</td>'),
    ('<td style=" TEXT-ALIGN : Center ; ">c</td>', '<td style=" TEXT-ALIGN : Center ; ">c</td>'),
    ('<td style="text-align:left;">c</td>', '<td style="text-align:left;">c</td>'),
    ('<td style="text-align:right; background-image:url(https://evil.example/x.png)">c</td>', '<td>c</td>'),
    ('<td style="text-align:right;color:red">c</td>', '<td>c</td>'),
    ('<td style="color:red; text-align:right">c</td>', '<td>c</td>'),
    ('<td style="text-align:right\n;background:url(x)">c</td>', '<td>c</td>'),
    ('<td style="text-align:justify">c</td>', '<td>c</td>'),
    ('<td style="text-align;background:url(https://evil.example/);x:right">c</td>', '<td>c</td>'),
    ('<td style="text-align:center;background:url(https://evil.example/);text-align:right">c</td>', '<td>c</td>'),
    ('<td style="text-align:rightx">c</td>', '<td>c</td>'),
    ('<td style="xtext-align:right">c</td>', '<td>c</td>'),
    ('<td style="text-align&#58;right; background:url(x)">c</td>', '<td>c</td>'),
    ('<p style="text-align:right">p</p>', '<p>p</p>'),
    # links: http(s), mailto, relative, fragments; no other scheme in any spelling
    ('<a href="https://example.org/a#b">x</a>', '<a href="https://example.org/a#b">x</a>'),
    ('<a href="#energy">x</a>', '<a href="#energy">x</a>'),
    ('<a href="  #energy ">x</a>', '<a href="#energy">x</a>'),
    ('<a href="notes/page.html#part">x</a>', '<a href="notes/page.html#part">x</a>'),
    ('<a href="mailto:someone@example.org">x</a>', '<a href="mailto:someone@example.org">x</a>'),
    ('<a href="HTTP://EXAMPLE.ORG/">x</a>', '<a href="HTTP://EXAMPLE.ORG/">x</a>'),
    ('<a href="javascript:alert(1)">x</a>', '<a>x</a>'),
    ('<a href="JAVASCRIPT:alert(1)">x</a>', '<a>x</a>'),
    ('<a href=" \tjavascript:alert(1)">x</a>', '<a>x</a>'),
    ('<a href="java&#x09;script:alert(1)">x</a>', '<a>x</a>'),
    ('<a href="&#106;avascript:alert(1)">x</a>', '<a>x</a>'),
    ('<a href="javascript:alert(1)#https://example.org">x</a>', '<a>x</a>'),
    ('<a href="vbscript:msgbox(1)">x</a>', '<a>x</a>'),
    ('<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;">x</a>', '<a>x</a>'),
    ('<a href="data:image/png;base64,AAAA">x</a>', '<a>x</a>'),
    ('<a href="file:///etc/passwd">x</a>', '<a>x</a>'),
    ('<a href="http://[bad">x</a>', '<a>x</a>'),
    ('<a href="https://example.org/" target="_blank" rel="noopener noreferrer">x</a>',
     '<a href="https://example.org/" target="_blank" rel="noopener noreferrer">x</a>'),
    ('<a href="https://example.org/" target="_top" rel="opener">x</a>', '<a href="https://example.org/">x</a>'),
    ('<a rel="noopener evil">x</a>', '<a>x</a>'),
    ('<a rel="nofollow">x</a>', '<a rel="nofollow">x</a>'),
    # images: data:image/ too, but no page and no mail
    ('<img src="data:image/png;base64,AAAA" alt="dot">', '<img src="data:image/png;base64,AAAA" alt="dot">'),
    ('<img src="DATA:IMAGE/PNG;base64,AAAA">', '<img src="DATA:IMAGE/PNG;base64,AAAA">'),
    ('<img src=" data:image/gif;base64,AAAA">', '<img src="data:image/gif;base64,AAAA">'),
    ('<img src="https://example.org/x.png#part">', '<img src="https://example.org/x.png#part">'),
    ('<img src="data:text/html;base64,PHNjcmlwdD4=">', '<img>'),
    ('<img src="mailto:someone@example.org">', '<img>'),
    ('<img src="javascript:alert(1)" onerror="alert(1)" ONLOAD="alert(2)">', '<img>'),
    ('<img srcset="https://evil.example/x 1x" width="1">', '<img>'),
    # handlers go in any case; class and title stay anywhere; ids only where headings and formulas need them
    ('<p onclick="alert(1)" OnMouseOver="alert(2)" class="note" title="t">p</p>', '<p class="note" title="t">p</p>'),
    ('<h2 id="intro" class="x">h</h2>', '<h2 id="intro" class="x">h</h2>'),
    ('<div id="energy">d</div>', '<div id="energy">d</div>'),
    ('<p id="energy" name="x">p</p>', '<p>p</p>'),
    ('<ol start="3" reversed=""><li value="9">i</li></ol>', '<ol start="3"><li>i</li></ol>'),
    ('<th style="text-align:center" colspan="2">h</th>', '<th style="text-align:center">h</th>'),
    # elements: unknown ones give up their text, those whose content is not text go whole
    ('<b>bold</b> <x-note>kept text</x-note>', 'bold kept text'),
    ('a<script>alert(1)</script>b<SCRIPT>alert(2)</SCRIPT>c', 'abc'),
    ('a<style>p{}</style><iframe src="https://evil.example/">frame text</iframe><object data="x"><p>fallback</p></object>b',
     'ab'),
    ('a<svg><a href="javascript:alert(1)">svg link</a></svg><SVG onload="alert(1)"></SVG>b', 'ab'),
    ('a<textarea>t</textarea><select><option>o</option></select><noscript>n</noscript>b', 'ab'),
    ('a<applet code="x"><p>applet</p></applet><noembed><p>noembed</p></noembed><noframes><p>noframes</p></noframes>b', 'ab'),
    ('a<frameset><frame src="x"></frameset><xmp><i>xmp</i></xmp><plaintext><i>plain</i>', 'a'),
    ('a<template><p>t</p></template><title>t</title><embed src="x"><meta charset="x"><link rel="x">b', 'ab'),
    ('a<form action="x"><input value="v"><button>go</button></form>b', 'agob'),
    ('a<!-- c --><!--<img src=x onerror=alert(1)>-->b', 'ab'),
    ('<details open ontoggle="alert(1)"><summary>s</summary>d</details>', 'sd'),
    ('<p>a<br>b<hr></p>', '<p>a<br>b</p><hr><p></p>'),
    ('<pre><code class="language-python">x &lt; 1</code></pre>', '<pre><code class="language-python">x &lt; 1</code></pre>'),
    ('<blockquote><em>e</em><strong>s</strong><s>s</s><span class="k">k</span></blockquote>',
     '<blockquote><em>e</em><strong>s</strong><s>s</s><span class="k">k</span></blockquote>'),
    ('<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>d</td></tr></tbody></table>',
     '<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>d</td></tr></tbody></table>'),
    ('<ul><li>a</li></ul><h1>1</h1><h3>3</h3><h4>4</h4><h5>5</h5><h6>6</h6>',
     '<ul><li>a</li></ul><h1>1</h1><h3>3</h3><h4>4</h4><h5>5</h5><h6>6</h6>'),
    # MathML: presentation elements and attributes, nothing that loads or runs
    ('<math display="block"><mfrac><mi mathvariant="bold" mathcolor="red">x</mi><mn>2</mn></mfrac></math>',
     '<math display="block"><mfrac><mi mathvariant="bold" mathcolor="red">x</mi><mn>2</mn></mfrac></math>'),
    ('<math><mi mathbackground="url(https://evil.example/)">x</mi><mo mathcolor="JavaScript:alert(1)">+</mo></math>',
     '<math><mi>x</mi><mo>+</mo></math>'),
    ('<math><mi mathbackground="VBScript:x" mathsize="expression(alert(1))">x</mi></math>', '<math><mi>x</mi></math>'),
    ('<math href="javascript:alert(1)" onclick="alert(1)"><mi style="color:red" xlink:href="x">x</mi></math>',
     '<math><mi>x</mi></math>'),
    ('<math><maction actiontype="toggle"><mi>a</mi></maction><mglyph src="x"></mglyph></math>', '<math><mi>a</mi></math>'),
    ('<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x</annotation></semantics></math>',
     '<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x</annotation></semantics></math>'),
    ('<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>',
     '<math><mtext><table></table></mtext></math>'),
]
# (line, what sanitizedHtml returns): highlighted lines pass as they are; anything else is cleaned
LINES = [
    ('<span class="tok-k">def</span> <span class="tok-nf">f</span>(x):', None),
    ('<span class="tok-s2">&quot;a &lt; b &amp; c&quot;</span> &#x27;q&#39; &gt;', None),
    ('<span class="tok-c1"><span class="tok-x">nested</span></span>', None),
    ('plain text only', None),
    ('', None),
    ('<span class="tok-k" onclick="alert(1)">def</span>', '<span class="tok-k">def</span>'),
    ('<span class="TOK-K">def</span>', '<span class="TOK-K">def</span>'),
    ('</span><script>alert(1)</script>x', 'x'),
    ('<span class="tok-k">def', '<span class="tok-k">def</span>'),
    ('<span class="tok-k">a</span></span>b', '<span class="tok-k">a</span>b'),
    ('<img src=x onerror="alert(1)">', '<img src="x">'),
    ('&lt;script&gt; & more', '&lt;script&gt; &amp; more'),
    ('<a href="javascript:alert(1)">l</a>', '<a>l</a>'),
]


@pytest.fixture(scope="module")
def sanitizer_page(browser, serve_module_site):
    site = serve_module_site()
    shutil.copy(SANITIZER, site.root / "js" / "sanitize.js")
    (site.root / "blank.html").write_text("<!doctype html><title>sanitiser</title>")
    context = browser.new_context()
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(site.url + "blank.html")
    page.evaluate("async () => { window.sanitizer = await import('./js/sanitize.js'); }")
    yield page
    context.close()


def sanitized_fragments(page, fragments: list[str]) -> list[str]:
    return page.evaluate("""(fragments) => fragments.map((html) => {
        const holder = document.createElement('div');
        holder.append(window.sanitizer.sanitizedFragment(html));
        return holder.innerHTML;
    })""", fragments)


@pytest.mark.parametrize("html, expected", FRAGMENTS, ids=[html[:40] for html, _ in FRAGMENTS])
def test_each_fragment_keeps_only_what_the_allow_list_names(sanitizer_page, html, expected):
    assert sanitized_fragments(sanitizer_page, [html]) == [expected]


@pytest.mark.parametrize("line, expected", LINES, ids=[line[:40] for line, _ in LINES])
def test_a_highlighted_line_passes_and_any_other_is_cleaned(sanitizer_page, line, expected):
    result = sanitizer_page.evaluate("(line) => window.sanitizer.sanitizedHtml(line)", line)
    assert result == (line if expected is None else expected)


def test_a_result_that_would_change_when_parsed_again_is_shown_as_text(sanitizer_page):
    """Mutation XSS: markup whose cleaned serialization parses into something else."""
    tricky = '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'
    result = sanitizer_page.evaluate("(html) => window.sanitizer.sanitizedHtml(html)", tricky)
    once = sanitizer_page.evaluate("""(html) => {
        const t = document.createElement('template'); t.innerHTML = html; return t.innerHTML; }""", result)
    assert once == result and "<img" not in result


def test_what_is_not_a_string_gives_nothing(sanitizer_page):
    assert sanitizer_page.evaluate("""() => [null, undefined, 3, {}].map((value) => [
        window.sanitizer.sanitizedHtml(value), window.sanitizer.sanitizedFragment(value).childNodes.length])""") == [
        ["", 0]] * 4
    assert sanitizer_page.dialogs == []
