"""The viewer in several languages, in Chromium: the switch, ?lang=, English fallback with a marker,
its own interface strings, and version-1 traces still shown."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from cs336_lectures.runtime.i18n.locale_numbers import plural_category

from test_i18n import EXAMPLE, ROOT, copy_example
from static_site import VIEWER
from trace_builders import demo_trace

pytestmark = pytest.mark.browser

TITLES = {"en": "Counting bytes in three scripts", "ru": "Считаем байты в трёх письменностях",
          "zh": "三种文字的字节计数"}


def trace_lecture(lecture, out, cwd, validate_trace) -> dict:
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(out), "--quiet"],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return validate_trace(out / "example_i18n.json")


@pytest.fixture(scope="module")
def site(tmp_path_factory, serve_module_site, validate_trace):
    assets = tmp_path_factory.mktemp("translated")
    translated = trace_lecture(EXAMPLE, assets, ROOT, validate_trace)
    assets /= "assets"
    work = tmp_path_factory.mktemp("edited")
    lecture = copy_example(work)
    lecture.write_text(lecture.read_text(encoding="utf-8").replace("## Why it matters", "## Why this matters"),
                       encoding="utf-8")
    subprocess.run([sys.executable, "-m", "cs336_lectures", "i18n", "extract", lecture.name], cwd=work, check=True,
                   capture_output=True)
    edited = trace_lecture(lecture, work / "out", work, validate_trace)
    return serve_module_site({"example_i18n": translated, "edited": edited, "demo": demo_trace()}, assets=assets)


def url_language(page) -> str | None:
    return parse_qs(urlparse(page.evaluate("location.href")).query).get("lang", [None])[0]


def test_the_switch_changes_the_heading_and_is_remembered(page, site):
    page.goto(site.url + "?trace=example_i18n&lang=ru")
    heading = page.locator(".block .rendered h1")
    expect(heading).to_have_text(TITLES["ru"])
    assert page.locator("#toc li").first.inner_text() == TITLES["ru"]
    assert page.locator("#language").input_value() == "ru"
    assert page.evaluate("document.documentElement.lang") == "ru"

    page.locator("#language").select_option("zh")
    expect(heading).to_have_text(TITLES["zh"])
    assert page.locator("#toc li").first.inner_text() == TITLES["zh"]
    assert url_language(page) == "zh"
    expect(page.locator("img.r-plot")).to_have_attribute("alt", "每个字符的 UTF-8 字节数（3 种文字）")
    counts = page.locator(".r-markdown[lang=zh]", has_text="平均每个字符")  # an f-string filled with traced numbers
    expect(counts).to_have_count(1)
    # textContent, not innerText: the paragraph may sit in a chunk the browser has not laid out
    # (content-visibility: auto), whose innerText reads empty
    assert re.fullmatch(r"\w\w：\d+ 个字符占 \d+ 个字节，平均每个字符 \d\.\d\d 个字节。", counts.text_content().strip())

    page.goto(site.url + "?trace=example_i18n")  # no ?lang=: the last choice, remembered
    expect(heading).to_have_text(TITLES["zh"])
    page.locator("#language").select_option("en")
    expect(heading).to_have_text(TITLES["en"])
    expect(page.locator("img.r-plot")).to_have_attribute("alt", "UTF-8 bytes per character, 3 scripts")
    assert url_language(page) is None
    assert page.locator(".i18n-marker").count() == 0


def test_a_stale_translation_shows_english_with_a_marker(page, site):
    page.goto(site.url + "?trace=edited&lang=ru")
    stale = page.locator(".r-markdown.i18n-fallback")
    expect(stale).to_have_count(1)
    assert stale.locator("h2").text_content() == "Why this matters"  # textContent: see above
    assert stale.get_attribute("lang") == "en"
    marker = stale.locator(".i18n-marker")
    assert marker.inner_text() == "EN"
    assert marker.get_attribute("title") == "Перевод устарел: показано по-английски."
    assert page.locator(".block .rendered h1").text_content() == TITLES["ru"]
    assert page.locator("#toc li").all_inner_texts()[1] == "Why this matters"  # the contents fall back too


def test_a_version_1_trace_shows_in_english_under_any_language(page, site):
    page.goto(site.url + "?trace=demo&lang=zh")
    page.wait_for_selector(".unit.current")
    assert page.locator(".r-markdown").first.get_attribute("lang") == "en"
    assert page.locator(".i18n-marker").count() == 0
    assert page.locator("#language").input_value() == "zh"
    page.goto(site.url + "?trace=demo")  # a language from a link is remembered, as one from the menu
    page.wait_for_selector(".unit.current")
    assert page.locator("#language").input_value() == "zh"


def interface_strings() -> set[str]:
    """Every English interface string the viewer translates: marked in index.html, or passed to t() or translatable()."""
    strings: set[str] = set()

    class Marked(HTMLParser):
        """Collects marked text; a child marked data-i18n-field="name" counts as {name}."""

        def __init__(self) -> None:
            super().__init__()
            self.collecting: list[str] | None = None
            self.in_field = False

        def handle_starttag(self, tag: str, attrs: list) -> None:
            attributes = dict(attrs)
            for name in (attributes.get("data-i18n-attrs") or "").split():
                strings.add(attributes[name])
            if "data-i18n" in attributes:
                self.collecting = []
            elif self.collecting is not None and "data-i18n-field" in attributes:
                self.collecting.append("{" + attributes["data-i18n-field"] + "}")
                self.in_field = True

        def handle_data(self, data: str) -> None:
            if self.collecting is not None and not self.in_field:
                self.collecting.append(data)

        def handle_endtag(self, tag: str) -> None:
            if self.in_field:
                self.in_field = False
            elif self.collecting is not None:
                strings.add("".join(self.collecting))
                self.collecting = None

    Marked().feed((VIEWER / "index.html").read_text(encoding="utf-8"))
    for script in (VIEWER / "js").glob("*.js"):
        source = script.read_text(encoding="utf-8")
        strings.update(re.findall(r"\bt\('((?:[^'\\]|\\.)*)'", source))
        for one, many in re.findall(r"\btCount\(.*?, '((?:[^'\\]|\\.)*)', '((?:[^'\\]|\\.)*)'\)", source):
            strings.update((one, many))
        for block in re.findall(r"translatable\(el\((.*?)\}\)\)", source, re.DOTALL):
            strings.update(re.findall(r"(?:text|title): '((?:[^'\\]|\\.)*)'", block))
    return strings


def test_every_interface_string_is_translated():
    source = (VIEWER / "js" / "i18n.js").read_text(encoding="utf-8")
    wanted = interface_strings()
    assert {"Keys", "Step back (h, ←)", "Contents", "step {n} of {total}", "Save and re-trace (Ctrl+S)",
            "edit the lecture under its code (with {command}, from the URL it printed)", "copy exact",
            "Re-tracing {name} failed: {error}", "go to line {n}", "file fails now", "{count} items",
            "{count} element", "first {n} of {elements} (flattened)"} <= wanted
    for language in ("ru", "zh"):
        block = source.split(f"\n  {language}: {{\n", 1)[1].split("\n  },", 1)[0]
        # a string, or for a count its plural forms (an object, or a constant holding one)
        translated = set(re.findall(r"^    '((?:[^'\\]|\\.)*)': (?:'|\{|[A-Z_]+,)", block, re.MULTILINE))
        assert wanted - translated == set(), f"untranslated in {language}"
        assert translated - wanted == set(), f"unused in {language}"


def test_the_interface_follows_the_language(page, site):
    page.goto(site.url + "?trace=example_i18n&lang=ru")
    expect(page.locator(".toc-title")).to_have_text("Содержание")
    assert page.locator("button[data-action=back]").get_attribute("title") == "Шаг назад (h, ←)"
    assert page.locator("#raw-button").inner_text() == "Код"
    counter = re.fullmatch(r"шаг (\d+) из (\d+)", page.locator("#counter").inner_text())  # counted from 1, as the list counts
    assert counter and 1 <= int(counter[1]) <= int(counter[2])
    assert page.locator("#divider").get_attribute("title") == "Перетащите, чтобы изменить ширину панели значений; двойной щелчок — сбросить"
    page.keyboard.press("?")
    assert page.locator("#help h2").inner_text() == "Клавиши"
    edit_line = page.locator("#help dd", has_text="править лекцию")
    assert edit_line.inner_text() == "править лекцию под её кодом (при запущенном cs336-lectures serve, открыв адрес, который он напечатал)"
    assert edit_line.locator("code").inner_text() == "cs336-lectures serve"  # the command keeps its code styling
    page.keyboard.press("Escape")
    page.locator("#language").select_option("zh")
    expect(page.locator(".toc-title")).to_have_text("目录")
    assert page.locator("#raw-button").inner_text() == "代码"
    assert page.locator("#help dd").first.inner_text() == "前进一步"
    assert page.locator("#help dd code").inner_text() == "cs336-lectures serve"
    assert page.locator("#counter").inner_text().startswith("第 ")
    page.locator("#language").select_option("en")
    expect(page.locator(".toc-title")).to_have_text("Contents")
    assert page.locator("button[data-action=back]").get_attribute("title") == "Step back (h, ←)"
    assert re.fullmatch(r"step \d+ of \d+", page.locator("#counter").inner_text())
    page.goto(site.url + "?lang=zh")
    expect(page.locator("#index-view h1")).to_have_text("讲座")
    expect(page.locator(".index-hint")).to_contain_text("e 编辑")
    page.goto(site.url + "?lang=ru")  # each card's step count agrees with its number, digits grouped the Russian way
    expect(page.locator("#index-view h1")).to_have_text("Лекции")
    cards = page.locator(".trace-card .trace-meta")
    assert cards.count() == 3
    for index in range(cards.count()):
        meta = cards.nth(index).inner_text()
        count = int(re.search(r"(\d[\d\u202f]*) шаг", meta)[1].replace("\u202f", ""))
        word = {"one": "шаг", "few": "шага", "many": "шагов"}[plural_category(str(count), "ru")]
        assert f"{count:,}".replace(",", "\u202f") + f" {word}" in meta, meta


def server_note_templates() -> set[str]:
    """Every template the runtime writes a run line or reason with: note("...") and count_of()."""
    import ast

    templates: set[str] = set()
    for module in (ROOT / "cs336_lectures" / "runtime").rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("note", "count_of"):
                literals = [argument.value for argument in node.args if isinstance(argument, ast.Constant)]
                if node.func.id == "note":
                    assert len(literals) == 1, f"{module.name}:{node.lineno}: a note's template must be a literal"
                    templates.add(literals[0])
                else:
                    assert len(literals) == 2, f"{module.name}:{node.lineno}: count_of's words must be literals"
                    templates.update(f"{{count}} {word}" for word in literals)
    return templates


def test_every_run_line_of_the_server_is_translated():
    wanted = server_note_templates()
    assert {"re-ran `{section}` ({seconds} s); {reused} reused", "the imports changed", "{count} sections",
            "{reason}, before `{section}`", "a re-trace was asked for"} <= wanted
    source = (VIEWER / "js" / "run_notes.js").read_text(encoding="utf-8")
    for language in ("ru", "zh"):
        block = source.split(f"\n  {language}: {{\n", 1)[1].split("\n  },", 1)[0]
        translated = {match[0] or match[1] for match in
                      re.findall(r"^    (?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"):", block, re.MULTILINE)}
        assert wanted - translated == set(), f"untranslated in {language}"
        assert translated - wanted == set(), f"unused in {language}"


def test_a_run_line_is_said_in_the_language_with_its_plural(page, site):
    page.goto(site.url + "?trace=example_i18n&lang=ru")
    page.wait_for_selector(".code .line.current", state="attached")
    said = page.evaluate("""async () => {
      const { say } = await import(new URL('js/run_notes.js', location.href).href);
      const sections = (count) => ({ template: count === 1 ? '{count} section' : '{count} sections', fields: { count } });
      const line = (after, reused) => say({ template: 're-ran `{section}` and the {after} after it ({seconds} s); {reused} reused',
                                            fields: { section: 'bpe', after: sections(after), seconds: '0.31', reused: sections(reused) } });
      const whole = say({ template: 're-ran the whole lecture ({seconds} s): {reason}', fields: { seconds: '4.10',
        reason: { template: 'module-level code changed (line {line})', fields: { line: 12 } } } });
      const unknown = say({ template: 'a line this viewer has no {word} for', fields: { word: 'translation' } });
      return [line(1, 21), line(3, 5), whole, unknown];
    }""")
    assert said == [
        "`bpe` и 1 раздел после него выполнены заново (0.31 с); из прошлого запуска взято: 21 раздел",
        "`bpe` и 3 раздела после него выполнены заново (0.31 с); из прошлого запуска взято: 5 разделов",
        "лекция выполнена заново целиком (4.10 с): изменился код на уровне модуля (строка 12)",
        "a line this viewer has no translation for",
    ]


def test_plural_forms_follow_a_switch_of_language(page, site):
    """Each language counts with its own plural rules, also after the reader switched to it."""
    page.goto(site.url + "?trace=example_i18n&lang=en")
    page.wait_for_selector(".code .line.current", state="attached")
    say = """async (counts) => {
      const { say } = await import(new URL('js/run_notes.js', location.href).href);
      return counts.map((count) => say({ template: count === 1 ? '{count} section' : '{count} sections', fields: { count } }));
    }"""
    assert page.evaluate(say, [1, 21]) == ["1 section", "21 sections"]
    english_forms = page.evaluate("""async () => {
      const { pluralForm } = await import(new URL('js/i18n.js', location.href).href);
      return [1, 21, 3].map((count) => pluralForm({ one: 'one', few: 'few', many: 'many', other: 'other' }, count));
    }""")  # English rules made first, as a catalog with English plural forms would
    assert english_forms == ["one", "other", "other"]
    page.locator("#language").select_option("zh")
    expect(page.locator(".toc-title")).to_have_text("目录")
    chinese = page.evaluate(say, [1, 21])
    assert all(re.search(r"[\u4e00-\u9fff]", line) for line in chinese), chinese
    page.locator("#language").select_option("ru")
    expect(page.locator(".toc-title")).to_have_text("Содержание")
    assert page.evaluate(say, [21, 3, 5, 11, 1, 1001]) == [
        "21 раздел", "3 раздела", "5 разделов", "11 разделов", "1 раздел", "1001 раздел"]
