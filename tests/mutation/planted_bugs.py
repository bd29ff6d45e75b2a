"""The eleven bugs that once passed every test (issue 25), planted again one at a time: each must
now fail the tests named beside it (`make mutation` runs this after mutmut; not part of CI).

Each bug is planted in a copy of the project (var/mutation/planted/), never in the working tree,
and the copy's tests run with the copy first on the path, in this process's children too.

    python tests/mutation/planted_bugs.py             # every bug
    python tests/mutation/planted_bugs.py kernel i18n  # some of them
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "var" / "mutation" / "planted"
COPIED = ("cs336_lectures", "tests", "lectures", "trace", "viewer", "pyproject.toml")


@dataclass(frozen=True)
class Bug:
    path: str
    before: str
    after: str
    tests: tuple[str, ...]


BUGS = {
    "edits": Bug("cs336_lectures/runtime/kernel/edits.py",
                 "    if len(old) != len(new):\n        extra = (old if len(old) > len(new) else new)[min(len(old), len(new))]\n"
                 "        return _describe(extra, extra)\n", "",
                 ("tests/runtime/kernel/test_edits.py", "tests/runtime/kernel/test_kernel.py", "-k", "end_is_unsafe or (unsafe_edits and TABLE)")),
    "kernel": Bug("cs336_lectures/runtime/kernel/process.py", "checkpoint.steps <= run.resumed.steps]",
                  "checkpoint.steps < run.resumed.steps]", ("tests/runtime/kernel/test_kernel.py", "-k", "in_a_row")),
    "server": Bug("cs336_lectures/runtime/server/retracing.py", "self.retracer.request(lecture, full=full, supersede=True)",
                  "self.retracer.request(lecture, supersede=True)", ("tests/runtime/server/test_server_runtime.py", "-k", "catalog")),
    "terminal": Bug("cs336_lectures/runtime/readers/terminal.py",
                    "[t for t in model.stops if t > s] + [t for t in model.stops if t <= s]",
                    "[t for t in model.stops if t >= s] + [t for t in model.stops if t < s]",
                    ("tests/runtime/readers/test_terminal.py", "-k", "searching_again")),
    "templates": Bug("cs336_lectures/runtime/i18n/templates.py", '("(.*?)" if', '("(.*)" if',
                     ("tests/runtime/i18n/test_i18n.py", "-k", "shortest")),
    "i18n": Bug("viewer/js/i18n.js", "const pluralRules = new Map(); // language -> its Intl.PluralRules, made once",
                "const firstRules = new Intl.PluralRules(current);\nconst pluralRules = { has: () => true, get: () => firstRules };",
                ("tests/viewer/test_viewer_i18n.py", "-k", "plural_forms_follow")),
    "course_import": Bug("cs336_lectures/runtime/course/stacks.py",
                         "        if level > 0 and stack[level - 1][2] != active[level - 1].line:\n"
                         "            return False  # the caller moved on: this is another call of the same function\n", "",
                         ("tests/runtime/course/test_course_import.py", "-k", "called_again")),
    "cells": Bug("cs336_lectures/runtime/notebooks/cells.py", "references.get(called) == 1 and ", "",
                 ("tests/runtime/notebooks/test_export.py", "-k", "another_section")),
    "executor": Bug("cs336_lectures/runtime/cli/batch.py",
                    '        if result["status"] != "ok":\n            status = max(status, 1)\n', "",
                    ("tests/runtime/cli/test_executor.py", "-k", "failing_lecture")),
    "sanitize": Bug("viewer/js/sanitize.js", r";?\s*$/i;", r";?\s*/i;", ("tests/viewer/test_viewer_sanitize.py", "tests/runtime/server/test_faults_web.py",
                                                                         "-k", "keeps_only or hostile_trace_runs")),
    "passive_svg": Bug("cs336_lectures/runtime/render/passive_svg.py", 'internal = value.startswith("#")',
                       'internal = "#" in value', ("tests/runtime/server/test_faults_web.py", "-k", "fragment or named")),
}


def copy_project() -> None:
    for entry in COPIED:
        source, destination = ROOT / entry, WORK / entry
        if destination.exists():
            shutil.rmtree(destination) if destination.is_dir() else destination.unlink()
        if source.is_dir():
            shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        else:
            shutil.copy2(source, destination)


def caught(name: str, bug: Bug) -> bool:
    """Plant the bug in the copy, run its tests, take it out again; True when a test failed."""
    path = WORK / bug.path
    original = path.read_text()
    assert original.count(bug.before) == 1, f"{name}: the code to change is not in {bug.path} once"
    path.write_text(original.replace(bug.before, bug.after))
    environment = {**os.environ, "PYTHONPATH": str(WORK)}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *bug.tests],
                              cwd=WORK, env=environment, capture_output=True, text=True, timeout=900)
    finally:
        path.write_text(original)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    print(f"{name:<14} {'caught' if done.returncode == 1 else 'MISSED'}: {' '.join(bug.tests)} -> {summary}", flush=True)
    return done.returncode == 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"bugs to plant (default: all): {', '.join(BUGS)}")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in BUGS]
    if unknown:
        parser.error(f"no bug {', '.join(unknown)} (bugs: {', '.join(BUGS)})")
    WORK.mkdir(parents=True, exist_ok=True)
    copy_project()
    missed = [name for name in (args.names or BUGS) if not caught(name, BUGS[name])]
    print(f"\n{len(args.names or BUGS) - len(missed)} of {len(args.names or BUGS)} planted bugs caught"
          + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
