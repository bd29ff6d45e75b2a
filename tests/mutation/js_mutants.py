"""Mutation testing of viewer/js/sanitize.js, the gate for every piece of HTML a trace brings
(`make mutation`; not part of `make test` nor of CI).

Each mutant is the file with one small change a hurried edit could make: a comparison flipped,
`&&` and `||` swapped, a condition made always true or always false, a regular expression's
anchor or flag dropped, a rejection (`return null`) turned into an acceptance, an element taken off
the list of those removed with their content. tests/viewer/test_viewer_sanitize.py runs against each (through
CS336_SANITIZE_JS, so the working tree is never changed); a mutant it still passes is reported
as survived, with its change.

    python tests/mutation/js_mutants.py            # all mutants, then the score
    python tests/mutation/js_mutants.py --list     # the mutants, numbered, nothing run
    python tests/mutation/js_mutants.py --only 6,7 # some of them again (after adding tests)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SANITIZER = ROOT / "viewer" / "js" / "sanitize.js"
TESTS = ["tests/viewer/test_viewer_sanitize.py"]
LIMIT_SECONDS = 300


@dataclass(frozen=True)
class Mutant:
    line: int  # 1-based
    before: str  # the line as written
    after: str  # the line mutated

    def apply(self, source: str) -> str:
        lines = source.split("\n")
        assert lines[self.line - 1] == self.before
        lines[self.line - 1] = self.after
        return "\n".join(lines)


def code_lines(source: str) -> list[tuple[int, str]]:
    """(number, line) of the lines that hold code, not comments."""
    found, in_comment = [], False
    for number, line in enumerate(source.split("\n"), 1):
        stripped = line.strip()
        if in_comment:
            in_comment = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_comment = "*/" not in stripped
            continue
        if stripped and not stripped.startswith("//"):
            found.append((number, line))
    return found


def _condition_spans(line: str) -> list[tuple[int, int]]:
    """Start and end (exclusive) of each `if (...)` condition on the line, brackets balanced."""
    spans = []
    for match in re.finditer(r"\bif \(", line):
        depth, start = 1, match.end()
        for index in range(start, len(line)):
            depth += {"(": 1, ")": -1}.get(line[index], 0)
            if depth == 0:
                spans.append((start, index))
                break
    return spans


def _replacements(line: str) -> list[str]:
    """Every single-change variant of one line of code."""
    variants = []

    def each(pattern: str, replacement: str) -> None:
        for match in re.finditer(pattern, line):
            variants.append(line[:match.start()] + match.expand(replacement) + line[match.end():])

    each(r"===", "!==")
    each(r"!==", "===")
    each(r"&&", "||")
    each(r"\|\|", "&&")
    each(r"(?<=[\w\])]) < (?=[\w.])", " <= ")
    each(r"(?<=[\w\])]) > (?=[\w.])", " >= ")
    each(r"(?<=[\s(])!(?=[\w(])", "")  # a negation dropped
    each(r"\btrue\b", "false")
    each(r"\bfalse\b", "true")
    each(r"return null;", "return value;")  # a rejection turned into an acceptance (both functions take `value`)
    for start, end in _condition_spans(line):
        variants.append(line[:start] + "true" + line[end:])
        variants.append(line[:start] + "false" + line[end:])
    regex = re.search(r"= (/.+/)([a-z]*);", line)
    if regex is not None:  # a regular expression: anchors, flags, classes widened
        body, flags = regex.group(1), regex.group(2)
        for anchor in ("/^", "$/"):
            if anchor in body:
                variants.append(line.replace(body, body.replace(anchor, "/"), 1))
        if flags:
            variants.append(line[:regex.start(2)] + flags.replace("i", "") + line[regex.end(2):])
        each(r"\\s\*", r".*")
        each(r"\(left\|right\|center\)", r"\\w+")
    return [variant for variant in dict.fromkeys(variants) if variant != line]


def mutants(source: str) -> list[Mutant]:
    found = [Mutant(number, line, variant) for number, line in code_lines(source) for variant in _replacements(line)]
    return list(dict.fromkeys([*found, *_drop_list_mutants(source)]))


def _drop_list_mutants(source: str) -> list[Mutant]:
    """An element taken off DROP_WITH_CONTENT: its content would show as text."""
    lines = source.split("\n")
    found = []
    for index, line in enumerate(lines):
        if "DROP_WITH_CONTENT" in line or (index and "DROP_WITH_CONTENT" in lines[index - 1] and line.strip().startswith("+")):
            words = re.search(r"'([a-z ]+)'", line)
            if words is None:
                continue
            for word in words.group(1).split():
                text = words.group(1)
                mutated = re.sub(rf"(?<![a-z]){word}(?![a-z]) ?", "", text, count=1)
                found.append(Mutant(index + 1, line, line.replace(f"'{text}'", f"'{mutated}'", 1)))
    return found


def survives(mutant: Mutant, source: str, folder: Path) -> bool:
    path = folder / "sanitize.js"
    path.write_text(mutant.apply(source))
    environment = {**os.environ, "CS336_SANITIZE_JS": str(path)}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *TESTS],
                              cwd=ROOT, env=environment, capture_output=True, text=True, timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        return False  # a mutant that hangs the page is caught as surely as one that fails
    return done.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the mutants and run nothing")
    parser.add_argument("--only", type=lambda text: [int(n) for n in text.split(",")], default=None,
                        help="run only these mutants (their numbers in --list, comma-separated)")
    args = parser.parse_args()
    source = SANITIZER.read_text()
    every = mutants(source)
    if args.only:
        every = [every[number - 1] for number in args.only]
    if args.list:
        for number, mutant in enumerate(every, 1):
            print(f"[{number}] line {mutant.line}: {mutant.after.strip()}")
        print(f"{len(every)} mutants")
        return 0
    print(f"==> {len(every)} mutants of {SANITIZER.relative_to(ROOT)}, each against {' '.join(TESTS)}", flush=True)
    survived = []
    with tempfile.TemporaryDirectory() as folder:
        for number, mutant in enumerate(every, 1):
            alive = survives(mutant, source, Path(folder))
            if alive:
                survived.append(mutant)
            print(f"[{number}/{len(every)}] {'SURVIVED' if alive else 'killed  '} line {mutant.line}: "
                  f"{mutant.after.strip()[:110]}", flush=True)
    killed = len(every) - len(survived)
    print(f"\nsanitize.js: {len(every)} mutants, {killed} killed, {len(survived)} survived, "
          f"score {100 * killed / len(every):.0f}%")
    for mutant in survived:
        print(f"    survived, line {mutant.line}:\n      - {mutant.before.strip()}\n      + {mutant.after.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
