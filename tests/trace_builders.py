"""Small traces built by hand (trace/README.md), for the viewer's browser tests and every other
test that needs a trace without tracing a lecture: a builder, value and rendering records, and
the standard traces (`demo_trace`, `error_trace`, `multiline_trace`).

    builder = TraceBuilder("demo")
    f = builder.file("demo.py", "def main():\\n    x = 1\\n")
    main = builder.call(builder.function(f, "main", 1))
    builder.step(main, 2, v={"x": 1})
    trace = builder.build()
"""

from __future__ import annotations

import base64
import functools
import html
import re
from typing import Any

KEYWORDS = re.compile(r"\b(def|return|for|in|import|from|yield|if|else|pass)\b")


def highlight(line: str) -> str:
    """A stand-in for the renderer's highlighting: escaped text with keywords in tok-k spans."""
    return KEYWORDS.sub(r'<span class="tok-k">\1</span>', html.escape(line))


def line_of(source: str, snippet: str, start: int = 1) -> int:
    """The 1-based number of the first line at or after `start` containing `snippet`."""
    for number, line in enumerate(source.splitlines(), 1):
        if number >= start and snippet in line:
            return number
    raise ValueError(f"{snippet!r} not in source")


class TraceBuilder:
    """Builds a version-1 trace dict: files, functions, calls and steps, in execution order."""

    def __init__(self, title: str, status: str = "ok", message: str | None = None):
        self.header: dict[str, Any] = {
            "title": title, "source": f"lectures/{title}.py", "entry": "main",
            "created": "2026-11-29T09:00:00Z", "elapsed_s": 0.5, "python": "3.11.9",
            "torch": "2.13.0", "platform": "Linux", "device": "cpu",
            "command": ["cs336-lectures", "trace", f"lectures/{title}.py"], "seed": 0, "status": status,
        }
        if message is not None:
            self.header["message"] = message
        self.files: list[dict] = []
        self.functions: list[list] = []
        self.calls: list[list] = []
        self.steps: list[list] = []

    def file(self, path: str, source: str, hidden: tuple[int, ...] = ()) -> int:
        lines = source.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.files.append({"path": path, "source": source, "html": [highlight(l) for l in lines], "hidden": list(hidden)})
        return len(self.files) - 1

    def function(self, file: int, name: str, first_line: int) -> int:
        self.functions.append([file, name, first_line])
        return len(self.functions) - 1

    def call(self, function: int, parent_step: int = -1, continues: int | None = None) -> int:
        self.calls.append([function, parent_step] + ([] if continues is None else [continues]))
        return len(self.calls) - 1

    def step(self, call: int, line: int, **extras: Any) -> int:
        """Record a step; extras use the trace's keys: v, c, r, o, e, x."""
        extras = {key: value for key, value in extras.items() if value is not None}
        self.steps.append([call, line, extras] if extras else [call, line])
        return len(self.steps) - 1

    def build(self) -> dict:
        header = dict(self.header, num_steps=len(self.steps))
        return {"format": "cs336-lectures-trace", "version": 1, "header": header, "files": self.files,
                "functions": self.functions, "calls": self.calls, "steps": self.steps}


def markdown(html_text: str, headings: list | None = None) -> dict:
    return {"type": "markdown", "html": html_text, "headings": headings or []}


def tensor(shape: list[int], data: Any, storage: int = 0, offset: int = 0, dtype: str = "float32") -> dict:
    strides, size = [], 1
    for extent in reversed(shape):
        strides.insert(0, size)
        size *= extent
    return {"t": "tensor", "dtype": dtype, "shape": shape, "stride": strides, "device": "cpu",
            "requires_grad": False, "contiguous": True, "storage": storage, "offset": offset,
            "nbytes": 4 * size, "data": data}


SVG_PLOT = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><polyline points="0,50 40,30 80,20 120,5" '
    b'fill="none" stroke="#8c1515" stroke-width="3"/></svg>').decode()

DEMO_SOURCE = '''from cs336_lectures import image, link, plot, text


def main():
    text("# Demo lecture")
    text("## Tensors")
    x = torch.zeros(2, 3)  # @inspect x
    y = x[0]  # @inspect y
    note = "<script>window.__pwned = 1</script>"  # @inspect note
    total = add(2, 3)  # @inspect total
    print("hello from stdout")
    text("""
    ## Links and images
    """)
    link(title="Attention is all you need", url="https://arxiv.org/abs/1706.03762")
    link(helpers.scale)
    image("missing.png")
    plot(figure)
    secret = 42  # @hide
    numbers = list(range(50))  # @inspect numbers
    for i in range(3):  # @inspect i
        total = add(total, i)  # @inspect total
    del i  # @clear i
    values = list(count())
    text("The end")


def add(a, b):  # @inspect a b
    c = a + b  # @inspect c
    return c


def count():
    n = 0  # @inspect n
    yield n
    print("resumed")
    n += 1  # @inspect n
    yield n
'''

HELPERS_SOURCE = '''"""Helpers the demo links to."""


def scale(x, factor):
    return x * factor
'''


def demo_trace(title: str = "demo") -> dict:
    """A small lecture exercising every feature the viewer shows: headings, renderings of each
    kind, a hidden line, nested calls, a loop, a generator resumed, tensors sharing storage,
    a string holding <script>, stdout."""
    src = DEMO_SOURCE
    at = functools.partial(line_of, src)
    b = TraceBuilder(title)
    demo = b.file(f"lectures/{title}.py", src, hidden=(at("secret = 42"),))
    helpers = b.file("cs336_lectures/helpers.py", HELPERS_SOURCE)
    main = b.call(b.function(demo, "main", at("def main")))
    add_fn = b.function(demo, "add", at("def add"))
    count_fn = b.function(demo, "count", at("def count"))

    def call_add(caller_step: int, a: int, b_: int) -> None:
        call = b.call(add_fn, caller_step)
        b.step(call, at("c = a + b"), v={"a": a, "b": b_, "c": a + b_})
        b.step(call, at("return c"))

    b.step(main, at('text("# Demo'), r=[markdown('<h1 id="demo-lecture">Demo lecture</h1>', [[1, "Demo lecture", "demo-lecture"]])])
    b.step(main, at('text("## Tensors'), r=[markdown('<h2 id="tensors">Tensors</h2>', [[2, "Tensors", "tensors"]])])
    b.step(main, at("x = torch"), v={"x": tensor([2, 3], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])})
    b.step(main, at("y = x[0]"), v={"y": tensor([3], [0.0, 0.0, 0.0])})
    b.step(main, at("note ="), v={"note": "<script>window.__pwned = 1</script>"})
    s = b.step(main, at("total = add(2, 3)"), v={"total": 5})
    call_add(s, 2, 3)
    b.step(main, at("print("), o="hello from stdout\n")
    b.step(main, at('text("""'), r=[markdown('<h2 id="links">Links and images</h2>', [[2, "Links and images", "links"]])])
    b.step(main, at("link(title="), r=[{"type": "link", "title": "Attention is all you need",
                                        "url": "https://arxiv.org/abs/1706.03762",
                                        "authors": ["Ashish Vaswani", "Noam Shazeer"], "date": "2017-06-12",
                                        "organization": "Google", "description": "The Transformer paper."}])
    b.step(main, at("link(helpers"), r=[{"type": "link", "title": "helpers.scale", "file": helpers,
                                        "line": line_of(HELPERS_SOURCE, "def scale")}])
    b.step(main, at("image("), r=[{"type": "image", "src": None, "alt": "missing.png",
                                   "error": "could not fetch missing.png: no such file"}])
    b.step(main, at("plot("), r=[{"type": "plot", "src": SVG_PLOT, "alt": "a rising line"}])
    b.step(main, at("secret = 42"))
    b.step(main, at("numbers ="), v={"numbers": {"t": "list", "items": list(range(50))}})
    total = 5
    for i in range(3):
        b.step(main, at("for i in"), v={"i": i})
        s = b.step(main, at("total = add(total"), v={"total": total + i})
        call_add(s, total, i)
        total += i
    b.step(main, at("for i in"))
    b.step(main, at("del i"), c=["i"])
    s = b.step(main, at("values = list"), v={"values": {"t": "list", "items": [0, 1]}})
    first = b.call(count_fn, s)
    b.step(first, at("n = 0"), v={"n": 0})
    b.step(first, at("yield n"))
    second = b.call(count_fn, s, continues=first)
    b.step(second, at('print("resumed")'), o="resumed\n")
    b.step(second, at("n += 1"), v={"n": 1})
    b.step(second, at("yield n", at("n += 1")))
    b.step(main, at('text("The end")'), r=[markdown("<p>The end</p>")])
    return b.build()


def error_trace(title: str = "broken") -> dict:
    """A lecture that raises on its third step."""
    src = "def main():\n    x = 1  # @inspect x\n    y = x / 0\n"
    b = TraceBuilder(title, status="error", message="ZeroDivisionError: division by zero")
    f = b.file(f"lectures/{title}.py", src)
    main = b.call(b.function(f, "main", 1))
    b.step(main, 2, v={"x": 1})
    b.step(main, 3, x={"type": "ZeroDivisionError", "message": "division by zero",
                       "traceback": 'Traceback (most recent call last):\n  File "broken.py", line 3, in main\n'
                                    "ZeroDivisionError: division by zero\n"})
    return b.build()


MULTILINE_SOURCE = '''def main():
    link(Reference(title="Attention",
                   url="https://arxiv.org/abs/1706.03762"))
    x = 1  # @inspect x
    text("one, "
         + str(x))
    print("a",
          "b")
    text("the end")
'''


def multiline_trace(title: str = "multiline") -> dict:
    """Statements spread over several lines, as Python reports them: a line event for each line
    whose arguments are evaluated, then the first line again for the call itself."""
    at = functools.partial(line_of, MULTILINE_SOURCE)
    b = TraceBuilder(title)
    f = b.file(f"lectures/{title}.py", MULTILINE_SOURCE)
    main = b.call(b.function(f, "main", 1))
    attention = {"type": "link", "title": "Attention", "url": "https://arxiv.org/abs/1706.03762"}
    b.step(main, at("link(Reference"))
    b.step(main, at("url="), v={"x": 0})  # a value written inside the statement still counts
    b.step(main, at("link(Reference"), r=[attention])
    b.step(main, at("x = 1"), v={"x": 1})
    b.step(main, at('text("one'))
    b.step(main, at("+ str(x)"), o="written while the arguments were evaluated\n")
    b.step(main, at('text("one'), r=[markdown("<p>one, 1</p>")])
    b.step(main, at('print("a"'))
    b.step(main, at('"b")'))
    b.step(main, at('print("a"'), o="a b\n")
    b.step(main, at('text("the end")'), r=[markdown("<p>the end</p>")])
    return b.build()
