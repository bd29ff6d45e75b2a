"""`cs336-lectures new LECTURE.py`: write a short lecture to start from.

The lecture shows every part of the shape once: a `main()` calling two sections, `text()`
with math, `# @inspect`, a `plot()`, a `link()` to a paper and to a function, and an exercise
whose answer is folded under `with solution():`. It traces as written. `--lang ru,zh` also
writes its translation catalogs (every string empty, as `i18n extract` would leave them).
Nothing that exists is replaced.

    $ cs336-lectures new softmax.py --lang ru,zh
"""

from __future__ import annotations

import argparse
import keyword
import sys
from pathlib import Path

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.i18n.catalog import LANGUAGES, Catalog, catalog_path, save_catalog
from cs336_lectures.runtime.i18n.translatable import scan_file
from cs336_lectures.runtime.terminal_text import print_visible

PROG = "cs336-lectures new"
STARTER_IMPORTS = ("matplotlib", "cs336_lectures")  # besides the standard library's math
TITLE_MARK = "__TITLE__"
STARTER = '''"""__TITLE__: softmax turns scores into probabilities; temperature reshapes them.

`cs336-lectures serve THIS_FILE` shows it in the browser and re-traces it on every save;
`cs336-lectures trace THIS_FILE` writes its trace. Each section is a function main() calls.
"""

import math

from matplotlib.figure import Figure

from cs336_lectures import Reference, link, plot, solution, text


def main():
    softmax_by_hand()
    temperature()
    exercise_uniform_scores()


def softmax_by_hand():
    text("# Softmax")
    text("A model ends in one score per choice. Softmax makes them a probability distribution:")
    text("$$p_i = \\\\frac{e^{z_i}}{\\\\sum_j e^{z_j}}$$")
    scores = [2.0, 1.0, 0.1]  # @inspect scores
    probabilities = softmax(scores)  # @inspect probabilities
    total = sum(probabilities)  # @inspect total
    text(f"The largest score gets the most mass ({probabilities[0]:.2f}), and the mass sums to one.")
    link(softmax)  # the viewer opens the function's source


def temperature():
    text("# Temperature")
    text("Dividing every score by a temperature $T$ before softmax reshapes the distribution: "
         "$T < 1$ sharpens it, $T > 1$ flattens it.")
    scores = [2.0, 1.0, 0.1]
    for t in (0.5, 1.0, 2.0):  # @inspect t
        sharpest = max(softmax(scores, t))  # @inspect sharpest
    plot(temperature_figure(scores))  # @stepover
    link(Reference(title="Distilling the Knowledge in a Neural Network", url="https://arxiv.org/abs/1503.02531",
                   authors=("Geoffrey Hinton", "Oriol Vinyals", "Jeff Dean"), date="2015"))


def exercise_uniform_scores():
    text("## Exercise: what does softmax give when all $n$ scores are equal?")
    with solution():
        n = 4
        probabilities = softmax([3.0] * n)  # @inspect probabilities
        text(f"Every choice gets $1/n$: here $1/{n}$ = {probabilities[0]}, whatever the common score.")


def softmax(scores: list[float], temperature: float = 1.0) -> list[float]:
    """Probabilities from scores; subtracting the largest score first keeps exp() from overflowing."""
    largest = max(scores)
    weights = [math.exp((score - largest) / temperature) for score in scores]
    total = sum(weights)
    return [weight / total for weight in weights]


def temperature_figure(scores: list[float]) -> Figure:
    figure = Figure(figsize=(5, 2.8))
    axes = figure.subplots()
    temperatures = [0.1 * step for step in range(2, 41)]
    for index in range(len(scores)):
        axes.plot(temperatures, [softmax(scores, t)[index] for t in temperatures], label=f"score {scores[index]}")
    axes.set_xlabel("temperature")
    axes.set_ylabel("probability")
    axes.set_title("Softmax of three scores")
    axes.legend()
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    main()
'''


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures new`."""
    parser.add_argument("file", metavar="LECTURE.py", help="the lecture to write (its folder is created if needed)")
    parser.add_argument("--lang", type=_languages, default=[], metavar="LANG[,LANG]",
                        help=f"also write empty translation catalogs for these languages ({', '.join(sorted(LANGUAGES))}), "
                             "under locales/LANG/ beside the lecture")


def _languages(text: str) -> list[str]:
    languages = [language.strip() for language in text.split(",") if language.strip()]
    unknown = [language for language in languages if language not in LANGUAGES]
    if unknown or not languages:
        raise argparse.ArgumentTypeError(f"languages are {', '.join(sorted(LANGUAGES))}, comma-separated; not {text!r}")
    return list(dict.fromkeys(languages))


def starter_source(lecture: Path) -> str:
    """The starting lecture for `lecture`, titled after its file name (`my_lecture.py` -> "My lecture")."""
    title = lecture.stem.replace("_", " ").strip().capitalize() or "Lecture"
    return STARTER.replace(TITLE_MARK, title)


def run(args: argparse.Namespace) -> int:
    """Write the lecture and the catalogs asked for; 2 (nothing written) when one would replace a file."""
    lecture = Path(args.file)
    if lecture.suffix != ".py" or not lecture.stem.isidentifier() or keyword.iskeyword(lecture.stem):
        return _error(f"{args.file}: a lecture is a Python module: a name like my_lecture.py "
                      "(letters, digits and _, not starting with a digit)")
    if lecture.stem in sys.stdlib_module_names or lecture.stem in STARTER_IMPORTS:
        return _error(f"{args.file}: the lecture's folder comes first on its import path, so this name would hide "
                      f"the module {lecture.stem!r} it or Python needs; choose another name")
    targets = [lecture, *(catalog_path(lecture, language) for language in args.lang)]
    existing = [str(path) for path in targets if path.exists() or path.is_symlink()]
    if existing:
        return _error(f"{', '.join(existing)} already exists; nothing written (choose another name or remove it)")
    try:
        lecture.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(lecture, starter_source(lecture).encode("utf-8"))
        calls = list(scan_file(lecture).values())
        for language in args.lang:
            save_catalog(Catalog(language, lecture.name).update(calls), catalog_path(lecture, language))
    except OSError as error:
        return _error(f"cannot write {error.filename or args.file}: {error.strerror or error}")
    written = "".join(f", {catalog_path(lecture, language)}" for language in args.lang)
    print_visible(f"wrote {lecture}{written}", sys.stdout)
    print_visible(f"next: cs336-lectures serve {lecture}   (or: cs336-lectures trace {lecture})", sys.stdout)
    return 0


def _error(message: str) -> int:
    print_visible(f"{PROG}: error: {message}")
    return 2
