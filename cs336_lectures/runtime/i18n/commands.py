"""`cs336-lectures i18n extract|check`: keep a lecture's translation catalogs in step with its English.

    $ cs336-lectures i18n extract lectures/lecture_01.py --lang ru --lang zh
    $ cs336-lectures i18n check lectures/lecture_01.py

`extract` writes lectures/locales/LANG/STEM.yaml (catalog.py): new strings get empty entries,
edited ones keep their old translation marked stale. `check` reports, per language, the entries
that are missing, stale, or whose translation does not fit its English (fields, headings,
formulas), and exits 1 when there are any; it never writes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cs336_lectures.runtime.i18n.catalog import (
    LANGUAGES, Catalog, CatalogError, catalog_languages, catalog_path, load_catalog, save_catalog,
)
from cs336_lectures.runtime.i18n.translatable import Call, scan_file
from cs336_lectures.runtime.terminal_text import print_visible

PROG = "cs336-lectures i18n"
EXCERPT = 70  # characters of English shown per problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `i18n` subcommands and their options."""
    commands = parser.add_subparsers(dest="i18n_command", metavar="ACTION", required=True)
    for name, about in (
        ("extract", "add new text() strings to the catalogs (empty translations) and mark edited ones stale"),
        ("check", "list missing, stale and mismatched translations per language; exit 1 when there are any"),
    ):
        sub = commands.add_parser(name, help=about, description=about)
        sub.add_argument("files", nargs="+", metavar="LECTURE.py", help="lecture files")
        sub.add_argument("--lang", action="append", choices=sorted(LANGUAGES), metavar="LANG",
                         help=f"a language ({', '.join(sorted(LANGUAGES))}); repeatable. Default: every "
                              "language that already has a catalog for the lecture")


def run(args: argparse.Namespace) -> int:
    """Run `i18n extract` or `i18n check`; 0 done (or all translated), 1 check found problems, 2 bad input."""
    status = 0
    for file in args.files:
        lecture = Path(file)
        try:
            calls = list(scan_file(lecture).values())
        except FileNotFoundError:
            return _error(f"{file}: no such file")
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as error:
            return _error(f"{file}: cannot read the lecture: {' '.join(str(error).split())}")
        languages = args.lang or catalog_languages(lecture)
        if not languages:
            if args.i18n_command == "extract":
                return _error(f"{file}: no catalogs yet; name the languages to create with --lang "
                              f"({', '.join(sorted(LANGUAGES))})")
            print_visible(f"{file}: no catalogs (nothing to check)", sys.stdout)
            continue
        for language in dict.fromkeys(languages):
            try:
                catalog = _load_or_new(lecture, language)
            except CatalogError as error:
                return _error(str(error))
            updated = catalog.update(calls)
            if args.i18n_command == "extract":
                save_catalog(updated, catalog_path(lecture, language))
                print_visible(_extract_summary(lecture, language, catalog, updated), sys.stdout)
            elif not _report(lecture, language, updated, calls):
                status = 1
    return status


def _load_or_new(lecture: Path, language: str) -> Catalog:
    path = catalog_path(lecture, language)
    return load_catalog(path) if path.exists() else Catalog(language, lecture.name)


def _extract_summary(lecture: Path, language: str, before: Catalog, after: Catalog) -> str:
    known = {entry.en for entry in before.entries}
    added = sum(entry.en not in known for entry in after.entries if entry.stale is None)
    stale = sum(entry.stale is not None for entry in after.entries)
    obsolete = sum(entry.obsolete for entry in after.entries)
    return (f"{catalog_path(lecture, language)}: {len(after.entries)} entries, {added} new, {stale} stale, "
            f"{obsolete} obsolete")


def _report(lecture: Path, language: str, catalog: Catalog, calls: list[Call]) -> bool:
    """Print the problems of one language; True when there are none."""
    lines = []
    for entry in catalog.entries:
        if entry.obsolete:
            continue
        if entry.stale is not None:
            lines.append(f"  stale    {entry.where}: {_excerpt(entry.en)}")
        elif not entry.translation:
            lines.append(f"  missing  {entry.where}: {_excerpt(entry.en)}")
        else:
            lines += [f"  mismatch {entry.where}: {_excerpt(entry.en)}: {problem}" for problem in entry.problems(language)]
    computed = sum(call.english is None for call in calls)
    counts = {kind: sum(line.startswith(f"  {kind}") for line in lines) for kind in ("missing", "stale", "mismatch")}
    summary = ", ".join(f"{count} {kind}" for kind, count in counts.items())
    plural = "s" if computed > 1 else ""
    note = f" ({computed} text() call{plural} with computed text, shown in English)" if computed else ""
    strings = sum(not entry.obsolete for entry in catalog.entries)
    print_visible(f"{lecture} [{language}]: {strings} strings, {summary}{note}", sys.stdout)
    for line in lines:
        print_visible(line, sys.stdout)
    return not lines


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= EXCERPT else flat[:EXCERPT - 1] + "…")


def _error(message: str) -> int:
    print_visible(f"{PROG}: error: {message}")
    return 2
