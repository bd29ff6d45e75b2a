"""Markdown, math and syntax highlighting rendered to HTML in Python."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cs336_lectures.runtime.render.rendering import highlight_lines, render_markdown, render_verbatim

TAG = re.compile(r"<[^>]*>")


def visible_text(fragment: str) -> str:
    return html.unescape(TAG.sub("", fragment))


# ---------------------------------------------------------------- markdown


def test_markdown_basics_and_tables():
    page, headings = render_markdown("Some **bold** and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<strong>bold</strong>" in page and "<code>code</code>" in page
    assert "<table>" in page and "<td>2</td>" in page
    assert headings == []


def test_raw_html_is_escaped():
    page, _ = render_markdown("<script>alert(1)</script>\n\nand <b onclick='x()'>inline</b>")
    assert "<script" not in page and "<b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_dangerous_link_schemes_are_not_links():
    page, _ = render_markdown("[click](javascript:alert(1))")
    assert "<a" not in page


def test_external_links_open_in_a_new_tab_and_internal_ones_do_not():
    page, _ = render_markdown("[paper](https://arxiv.org/abs/1508.07909) and [up](#top)")
    assert '<a href="https://arxiv.org/abs/1508.07909" target="_blank" rel="noopener">paper</a>' in page
    assert '<a href="#top">up</a>' in page


def test_headings_get_stable_unique_anchors():
    page, headings = render_markdown("# Byte-pair encoding (BPE)\n## Why `bytes`?\n## Why `bytes`?\n### Токены")
    assert headings == [
        [1, "Byte-pair encoding (BPE)", "byte-pair-encoding-bpe"],
        [2, "Why bytes?", "why-bytes"],
        [2, "Why bytes?", "why-bytes-1"],
        [3, "Токены", "токены"],
    ]
    assert '<h1 id="byte-pair-encoding-bpe">' in page and '<h2 id="why-bytes-1">' in page
    assert render_markdown("# Byte-pair encoding (BPE)") == render_markdown("# Byte-pair encoding (BPE)")


def test_anchors_stay_unique_across_calls_sharing_a_set():
    used: set[str] = set()
    assert render_markdown("# Intro", used)[1] == [[1, "Intro", "intro"]]
    assert render_markdown("# Intro", used)[1] == [[1, "Intro", "intro-1"]]


def test_inline_and_display_math_become_mathml():
    page, _ = render_markdown(r"Cost is $O(n^2)$ per step.")
    assert '<span class="math inline"><math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in page
    assert "<msup><mi>n</mi><mn>2</mn></msup>" in page
    block, _ = render_markdown("$$\n\\frac{a}{b}\n$$")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in block and "<mfrac>" in block
    inline_display, _ = render_markdown("so $$x^2$$ here")
    assert "<div" not in inline_display and 'display="block"' in inline_display


def test_dollar_amounts_are_not_math():
    page, _ = render_markdown("It costs $5 and $10 per hour.")
    assert "<math" not in page and "$5 and $10" in page


def test_math_that_cannot_be_rendered_shows_its_source_escaped():
    page, _ = render_markdown(r"$\text{<script>alert(1)</script>}$")
    assert "<script" not in page and '<code class="math-error"' in page
    assert r"\text{&lt;script&gt;alert(1)&lt;/script&gt;}" in page
    broken, _ = render_markdown(r"$\text{a<b}$")  # latex2mathml would emit malformed markup
    assert "<math" not in broken and "math-error" in broken


def test_verbatim_is_escaped_preformatted_text():
    assert render_verbatim("if a < b:\n    x = '&'") == '<pre class="verbatim">if a &lt; b:\n    x = \'&amp;\'</pre>'


# ---------------------------------------------------------------- highlighting


def test_highlight_gives_one_string_per_line_with_token_classes():
    lines = highlight_lines("def f(x):\n    return x + 1  # add one\n")
    assert len(lines) == 2
    assert lines[0].startswith('<span class="tok-k">def</span> <span class="tok-nf">f</span>')
    assert '<span class="tok-c1"># add one</span>' in lines[1]
    assert '<span class="tok-mi">1</span>' in lines[1]


def test_multiline_strings_are_split_at_line_breaks():
    lines = highlight_lines('doc = """first\n<second>\nthird"""\n')
    assert len(lines) == 3
    for line in lines:
        assert line.count("<span") == line.count("</span>")
    assert lines[1] == '<span class="tok-s2">&lt;second&gt;</span>'


def test_line_counting_matches_the_source():
    assert highlight_lines("") == []
    assert highlight_lines("\n\nx = 1") == ["", "", '<span class="tok-n">x</span> <span class="tok-o">=</span> <span class="tok-mi">1</span>']
    assert len(highlight_lines("a\n\n")) == 2  # the empty last line before the final newline
    assert len(highlight_lines("a\r\nb\rc")) == 3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text() | st.sampled_from(["\n", "\r", '"""', "#", "'", "\\", "\t", "\x0c"])).map("".join))
def test_highlighting_keeps_every_character_on_its_line(source):
    normalized = source.replace("\r\n", "\n").replace("\r", "\n")
    expected = normalized.split("\n")
    if normalized.endswith("\n") or not normalized:
        expected.pop()
    lines = highlight_lines(source)
    assert [visible_text(line) for line in lines] == expected
