"""Lectures in several languages: templates, catalogs, `i18n extract|check`, and translated traces."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from cs336_lectures import load_trace
from cs336_lectures.runtime.trace.format import write_trace
from cs336_lectures.runtime.i18n.catalog import Catalog, CatalogError, Entry, catalog_path, load_catalog, save_catalog
from cs336_lectures.runtime.i18n.templates import Template, TemplateError
from cs336_lectures.runtime.i18n.translatable import scan_source

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "lectures" / "example_i18n.py"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def copy_example(folder: Path) -> Path:
    """The example lecture and its catalogs, copied into `folder` (to be edited by a test)."""
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    shutil.copytree(EXAMPLE.parent / "locales", folder / "locales",
                    ignore=lambda _, names: [n for n in names if n.endswith(".yaml") and n != "example_i18n.yaml"])
    return folder / EXAMPLE.name


def markdowns(trace) -> list[dict]:
    return [r for step in trace.steps for r in step.renderings if r["type"] == "markdown"]


# ---------------------------------------------------------------- templates


def test_template_reads_fields_and_fills_a_reordered_translation():
    template = Template.parse("{n:,} bytes in {k} tokens ({{exact}})")
    assert template.fields == ("n:,", "k")
    assert template.values("1,024 bytes in 7 tokens ({exact})") == {"n:,": "1,024", "k": "7"}
    assert template.fill("{k} токенов на {n:,} байт ({{точно}})", "1,024 bytes in 7 tokens ({exact})") == \
        "7 токенов на 1,024 байт ({точно})"
    assert template.fill("{k}", "no match here") is None


def test_template_refuses_broken_text_and_unknown_fields():
    with pytest.raises(TemplateError, match="not closed"):
        Template.parse("{n bytes")
    with pytest.raises(TemplateError, match="single '}'"):
        Template.parse("n} bytes")
    with pytest.raises(TemplateError, match="fields the English lacks: m"):
        Template.parse("{n} bytes").fill("{m} байт", "3 bytes")


def test_scan_finds_literals_templates_and_figure_texts_but_not_computed_or_verbatim_text():
    source = '''
from cs336_lectures import text

def lesson(data, tokens):
    text("## Bytes")
    text("implicit " "concatenation")
    text(f"{len(data)} bytes, {len(data) / len(tokens):.2f} per token, {{braces}}")
    text("\\n".join(["a", "b"]))
    text("exact", verbatim=True)
    text(markdown=f"no fields")
    axes.set_title(f"{len(data)} bytes")
    axes.set_xlabel(axis_name)
    axes.text(0.5, 0.5, "an annotation")
    axes.text(0.5, 0.5, f"{len(data):.2f}")
    axes.plot(data, label="float32")
    axes.legend(handles, [f"{field} bits" for field in fields])
    names = [translatable("decode"), "not marked"]
    axes.set_xticks(range(2), ["prefill", f"{names[0]}"])
'''
    calls = sorted(scan_source(source).values(), key=lambda call: call.line)
    assert [(c.english, c.template, c.where, c.label) for c in calls] == [
        ("## Bytes", False, "lesson", False),
        ("implicit concatenation", False, "lesson", False),
        ("{len(data)} bytes, {len(data) / len(tokens):.2f} per token, {{braces}}", True, "lesson", False),
        (None, False, "lesson", False),
        ("no fields", False, "lesson", False),
        ("{len(data)} bytes", True, "lesson", True),
        ("an annotation", False, "lesson", True),
        ("float32", False, "lesson", True),
        ("{field} bits", True, "lesson", True),
        ("decode", False, "lesson", True),
        ("prefill", False, "lesson", True),
    ]


# ---------------------------------------------------------------- catalogs


def test_catalog_round_trip_keeps_every_field(tmp_path):
    catalog = Catalog("ru", "lecture.py", [
        Entry("# Title", "# Заголовок", where="main"),
        Entry("{n} bytes", "{n} байт", template=True, where="count"),
        Entry("line one\nline two with $x^2$", "строка один\nстрока два с $x^2$", where="main"),
        Entry("edited", "старый перевод", where="main", stale="original"),
        Entry("gone", "ушло", where="main", obsolete=True),
        Entry("new", where="main"),
    ])
    path = tmp_path / "locales" / "ru" / "lecture.yaml"
    save_catalog(catalog, path)
    assert load_catalog(path) == catalog
    assert "line one\n  line two" not in path.read_text(encoding="utf-8")  # multi-line text is a YAML block
    assert "|-\n    line one\n    line two" in path.read_text(encoding="utf-8")


def test_load_catalog_names_the_file_and_entry_when_malformed(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("language: ru\nentries:\n- en: fine\n- translation: no English\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"bad.yaml: entry 2: an entry needs `en`"):
        load_catalog(path)
    path.write_text("language: fr\nentries: []\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="language 'fr' is not one of ru, zh"):
        load_catalog(path)
    path.write_text("entries: [unclosed\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="cannot read the catalog"):
        load_catalog(path)


def test_update_marks_an_edited_string_stale_and_keeps_its_translation():
    old = '''def intro():
    text("Tokenization turns strings into integers.")
    text("## Bytes")
'''
    new = '''def intro():
    text("Tokenization turns text into sequences of integers.")
    text("## Bytes")
    text("A brand new paragraph about something else entirely.")
'''
    catalog = Catalog("ru", "l.py").update(scan_source(old).values())
    catalog.entries[0].translation = "Токенизация переводит строки в целые числа."
    catalog.entries[1].translation = "## Байты"
    updated = catalog.update(scan_source(new).values())
    edited, heading, added = updated.entries
    assert edited == Entry("Tokenization turns text into sequences of integers.",
                           "Токенизация переводит строки в целые числа.", where="intro",
                           stale="Tokenization turns strings into integers.")
    assert heading.current and heading.translation == "## Байты"
    assert added == Entry("A brand new paragraph about something else entirely.", where="intro")
    # Edited again before anyone translated it: the translation's source stays the first English.
    again = updated.update(scan_source(new.replace("sequences of ", "")).values())
    assert again.entries[0].stale == "Tokenization turns strings into integers."


def test_update_keeps_a_removed_string_as_obsolete():
    catalog = Catalog("zh", "l.py", [Entry("Old words.", "旧的话。", where="intro")])
    updated = catalog.update(scan_source('def other():\n    text("Completely different.")\n').values())
    assert [(e.en, e.translation, e.obsolete) for e in updated.entries] == [
        ("Completely different.", "", False), ("Old words.", "旧的话。", True)]


def test_entry_problems_catch_changed_fields_headings_and_formulas():
    assert Entry("{n} bytes", "{m} байт", template=True).problems() == [
        "fields differ: English has {n}, the translation {m}"]
    assert Entry("## Bytes", "# Байты").problems() == ["headings differ in level or number"]
    assert Entry("Size $O(n)$.", "Размер O(n).").problems() == ["the number of formulas ($...$) differs"]
    assert Entry("Size $O(n)$.", "Размер $O(n)$.").problems() == []


# ---------------------------------------------------------------- the command line


def test_extract_then_check_after_an_english_edit(tmp_path):
    lecture = tmp_path / "tiny.py"
    lecture.write_text('from cs336_lectures import text\n\ndef main():\n    text("# Hello")\n'
                       '    n = 3\n    text(f"{n} bytes")\n', encoding="utf-8")
    done = cli("i18n", "extract", "tiny.py", "--lang", "ru", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{Path('locales/ru/tiny.yaml')}: 2 entries, 2 new, 0 stale, 0 obsolete"
    check = cli("i18n", "check", "tiny.py", cwd=tmp_path)
    assert check.returncode == 1
    assert "tiny.py [ru]: 2 strings, 2 missing, 0 stale, 0 mismatch" in check.stdout
    assert "missing  main: '# Hello'" in check.stdout

    path = catalog_path(lecture, "ru")
    catalog = load_catalog(path)
    catalog.entries[0].translation, catalog.entries[1].translation = "# Привет", "{n} байт"
    save_catalog(catalog, path)
    assert cli("i18n", "check", "tiny.py", cwd=tmp_path).returncode == 0

    lecture.write_text(lecture.read_text(encoding="utf-8").replace("# Hello", "# Hello there"), encoding="utf-8")
    check = cli("i18n", "check", "tiny.py", cwd=tmp_path)
    assert check.returncode == 1 and "0 missing, 1 stale" in check.stdout
    assert cli("i18n", "extract", "tiny.py", cwd=tmp_path).returncode == 0
    entry = load_catalog(path).entries[0]
    assert (entry.en, entry.translation, entry.stale) == ("# Hello there", "# Привет", "# Hello")


def test_cli_errors_are_one_line(tmp_path):
    (tmp_path / "broken.py").write_text("def main(:\n", encoding="utf-8")
    (tmp_path / "fine.py").write_text('text("hi")\n', encoding="utf-8")
    cases = [
        (("i18n", "check", "missing.py"), "missing.py: no such file"),
        (("i18n", "extract", "broken.py", "--lang", "ru"), "broken.py: cannot read the lecture"),
        (("i18n", "extract", "fine.py"), "fine.py: no catalogs yet; name the languages to create with --lang"),
    ]
    for args, message in cases:
        done = cli(*args, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and message in done.stderr
    (tmp_path / "locales" / "ru").mkdir(parents=True)
    (tmp_path / "locales" / "ru" / "fine.yaml").write_text("language: ru\nentries: 3\n", encoding="utf-8")
    done = cli("i18n", "check", "fine.py", cwd=tmp_path)
    assert done.returncode == 2 and "fine.yaml: a catalog is a mapping" in done.stderr


def test_the_example_lecture_is_fully_translated():
    done = cli("i18n", "check", "lectures/example_i18n.py", cwd=ROOT)
    assert done.returncode == 0, done.stdout
    assert "[ru]: 10 strings, 0 missing, 0 stale, 0 mismatch" in done.stdout
    assert "[zh]: 10 strings, 0 missing, 0 stale, 0 mismatch" in done.stdout


# ---------------------------------------------------------------- traces


def test_trace_carries_every_language_with_traced_numbers(tmp_path, validate_trace):
    done = cli("trace", str(EXAMPLE), "-o", str(tmp_path), "--quiet", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    validate_trace(tmp_path / "example_i18n.json")
    trace = load_trace(tmp_path / "example_i18n.json")
    assert trace.header and trace.steps
    rendered = markdowns(trace)
    title = rendered[0]
    assert title["headings"] == [[1, "Counting bytes in three scripts", "counting-bytes-in-three-scripts"]]
    assert title["translations"]["ru"]["headings"] == [[1, "Считаем байты в трёх письменностях",
                                                       "counting-bytes-in-three-scripts"]]
    assert title["translations"]["zh"]["html"] == '<h1 id="counting-bytes-in-three-scripts">三种文字的字节计数</h1>\n'
    counts = [r for r in rendered if "bytes per character" in r["html"]]
    assert [r["html"] for r in counts][2] == "<p><code>zh</code>: 9 characters take 27 bytes, 3.00 bytes per character.</p>\n"
    assert counts[1]["translations"]["ru"]["html"] == "<p><code>ru</code>: 29 символов занимают 54 байт, 1.86 байта на символ.</p>\n"
    assert counts[0]["translations"]["zh"]["html"] == "<p><code>en</code>：27 个字符占 27 个字节，平均每个字符 1.00 个字节。</p>\n"
    formula = next(r for r in rendered if "compression ratio" in r["html"])
    assert "<math" in formula["translations"]["ru"]["html"] and "байты" in formula["translations"]["ru"]["html"]
    table = rendered[-1]
    assert "<table>" in table["html"] and "translations" not in table and "untranslated" not in table

    [figure] = [r for step in trace.steps for r in step.renderings if r["type"] == "plot"]
    assert figure["alt"] == "UTF-8 bytes per character, 3 scripts"
    assert {language: drawing["alt"] for language, drawing in figure["translations"].items()} == {
        "ru": "Байтов UTF-8 на символ, письменностей: 3", "zh": "每个字符的 UTF-8 字节数（3 种文字）"}
    svgs = {language: (tmp_path / drawing["src"]).read_text(encoding="utf-8")
            for language, drawing in figure["translations"].items()}
    assert "每个字符的字节数" in svgs["zh"]  # Chinese stays text in the SVG, for the browser's fonts to draw
    assert "<text" not in svgs["ru"] and svgs["ru"] != (tmp_path / figure["src"]).read_text(encoding="utf-8")


def test_stale_and_missing_strings_fall_back_to_english(tmp_path, validate_trace):
    lecture = copy_example(tmp_path)
    source = lecture.read_text(encoding="utf-8")
    source = source.replace('text("## Why it matters")', 'text("## Why this matters")')
    source = source.replace('    text("## What stays in English")',
                            '    text("A sentence written after the catalogs.")\n    text("## What stays in English")')
    lecture.write_text(source, encoding="utf-8")
    assert cli("i18n", "extract", lecture.name, cwd=tmp_path).returncode == 0  # marks the heading stale
    source = source.replace("A sentence written after the catalogs.", "Still not extracted.")
    lecture.write_text(source, encoding="utf-8")
    done = cli("trace", lecture.name, "-o", "out", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    validate_trace(tmp_path / "out" / "example_i18n.json")
    rendered = {r["html"]: r for r in markdowns(load_trace(tmp_path / "out" / "example_i18n.json"))}
    heading = rendered['<h2 id="why-this-matters">Why this matters</h2>\n']
    assert heading["untranslated"] == {"ru": "stale", "zh": "stale"} and "translations" not in heading
    fresh = rendered["<p>Still not extracted.</p>\n"]
    assert fresh["untranslated"] == {"ru": "missing", "zh": "missing"}
    assert set(rendered['<h2 id="what-stays-in-english">What stays in English</h2>\n']["translations"]) == {"ru", "zh"}


def test_version_1_traces_still_load_and_validate(tmp_path, validate_trace):
    from test_trace_format import make_trace

    rendering = {"type": "markdown", "html": "<p>hi</p>\n", "headings": []}
    for version in (1, 2):
        trace = {**make_trace([[0, 2, {"r": [rendering]}], [1, 5]]), "version": version}
        validate_trace(trace)
        path = tmp_path / f"v{version}.json"
        write_trace(trace, path)
        assert load_trace(path).steps[0].renderings == [rendering]
    for wrong in ({"untranslated": {"RU!": "missing"}}, {"untranslated": {"ru": "unknown"}},
                  {"translations": {"ru": {"html": "<p>привет</p>"}}}):  # a language is a code; headings required
        with pytest.raises(jsonschema.ValidationError, match="is not valid under any of the given schemas"):
            validate_trace(make_trace([[0, 2, {"r": [{**rendering, **wrong}]}]]))


def test_a_broken_catalog_warns_once_and_its_language_falls_back_to_english(tmp_path, validate_trace):
    lecture = copy_example(tmp_path)
    catalog_path(lecture, "ru").write_text("language: ru\nentries: [oops\n", encoding="utf-8")
    done = cli("trace", lecture.name, "-o", "out", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    validate_trace(tmp_path / "out" / "example_i18n.json")
    trace = load_trace(tmp_path / "out" / "example_i18n.json")
    warnings = "".join(step.stderr for step in trace.steps)
    assert warnings.count("cs336-lectures: warning:") == 1 and "ru/example_i18n.yaml: cannot read the catalog" in warnings
    title = markdowns(trace)[0]
    assert set(title["translations"]) == {"zh"} and title["untranslated"] == {"ru": "missing"}


def test_annotations_legends_ticks_and_marked_words_of_a_figure_are_translated_inside_templates_too(tmp_path, validate_trace):
    lecture = tmp_path / "figures.py"
    lecture.write_text('''from matplotlib.figure import Figure
from cs336_lectures import plot
from cs336_lectures.runtime.i18n.translatable import translatable

PARTS = [translatable("weights"), translatable("gradients")]


def main():
    figure = Figure()
    axes = figure.subplots()
    for part in PARTS:
        axes.plot([1, 2], [3, 4], label=part)
    axes.legend()
    axes.text(1, 3, "memory-bound")
    for part in PARTS:
        axes.text(2, 4, f"{part} kept")
    axes.set_xticks(range(2), [f"{kind} step" for kind in ("warm", "cold")])
    axes.set_title("Bytes")
    plot(figure)
''', encoding="utf-8")
    done = cli("i18n", "extract", str(lecture), "--lang", "zh", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    translations = {"weights": "权重", "gradients": "梯度", "memory-bound": "受内存限制", "{kind} step": "{kind} 步",
                    "{part} kept": "保留的{part}", "Bytes": "字节"}
    catalog = load_catalog(catalog_path(lecture, "zh"))
    assert sorted(entry.en for entry in catalog.entries) == sorted(translations)
    for entry in catalog.entries:
        entry.translation = translations[entry.en]
    save_catalog(catalog, catalog_path(lecture, "zh"))
    done = cli("trace", str(lecture), "-o", str(tmp_path / "out"), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    validate_trace(tmp_path / "out" / "figures.json")
    [figure] = [r for step in load_trace(tmp_path / "out" / "figures.json").steps for r in step.renderings
                if r["type"] == "plot"]
    svg = (tmp_path / "out" / figure["translations"]["zh"]["src"]).read_text(encoding="utf-8")
    for chinese in ("权重", "梯度", "受内存限制", "warm 步", "cold 步", "保留的权重", "保留的梯度", "字节"):
        assert chinese in svg
    assert "memory-bound" not in svg and "gradients" not in svg
