"""A tour of the framework: every primitive and every directive, once.

Trace it with `cs336-lectures trace lectures/example_basics.py` and step through it in the
viewer; read it top to bottom as a template for a new lecture.
"""

import tempfile
from pathlib import Path

from matplotlib.figure import Figure

from cs336_lectures import Reference, image, link, plot, text
from cs336_lectures.tokenization import get_compression_ratio


def main():
    primitives()
    directives()


def primitives():
    text("# The primitives")
    text("`text` takes markdown: **bold**, *italic*, `code`, lists, tables, and math, "
         "inline $e^{i\\pi} + 1 = 0$ or displayed:")
    text("$$\\text{compression ratio} = \\frac{\\text{UTF-8 bytes}}{\\text{tokens}}$$")
    text("verbatim=True shows text as-is, e.g. a regular expression: \\p{L}+|\\s+", verbatim=True)
    text("style= takes CSS declarations.", style={"color": "#c2410c", "font-weight": "bold"})

    text("`link` takes a Reference, a URL, keyword arguments, or a function or class:")
    link(Reference(title="Neural Machine Translation of Rare Words with Subword Units",
                   url="https://arxiv.org/abs/1508.07909",
                   authors=("Rico Sennrich", "Barry Haddow", "Alexandra Birch"), date="2016"))
    link("https://github.com/openai/tiktoken")
    link(title="Let's build the GPT Tokenizer", url="https://www.youtube.com/watch?v=zduSFxRajkE",
         authors=["Andrej Karpathy"], date="2024")
    link(get_compression_ratio)  # an internal link: the viewer opens its source

    text("`plot` takes a matplotlib figure and stores it as SVG:")
    plot(squares_figure())  # @stepover

    text("`image` copies a local file (or fetches a URL once) into the trace's assets; here "
         "a PNG the program has just drawn:")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "squares.png"
        squares_figure().savefig(path, dpi=60)  # @stepover
        image(str(path), width=300)
    text("A file that cannot be had becomes a placeholder, never an exception:")
    image("no-such-picture.png")


def directives():
    text("# The directives")
    text("`@inspect` records values after the line runs:")
    string = "Hello, 🌍! Привет!"  # @inspect string
    num_bytes = len(string.encode("utf-8"))  # @inspect num_bytes
    squares = [n * n for n in range(5)]  # @inspect squares
    total = 0  # @inspect total
    for n in squares:  # @inspect n
        total += n  # @inspect total
    text("`@clear` removes a value from the display once it is no longer interesting:")
    del n  # @clear n
    text("`@stepover` runs a call without stepping into it (the helper below has a loop):")
    result = slow_sum(1000)  # @stepover @inspect result
    text("`@hide` keeps a line out of the viewer entirely (the next line sets up a value):")
    secret = 42  # @hide
    answer = secret  # @inspect answer


def slow_sum(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def squares_figure():
    figure = Figure(figsize=(4, 2.5))
    axes = figure.subplots()
    axes.plot(range(10), [n * n for n in range(10)], marker="o")
    axes.set_title("n squared")
    figure.tight_layout()
    return figure


if __name__ == "__main__":
    main()
