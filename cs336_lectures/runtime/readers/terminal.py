"""`cs336-lectures show`: a trace in the terminal, for machines without a browser (ssh, clusters).

One step is drawn as the web viewer draws it, in text: the code around the step with the
current line marked and each statement that renders shown as its rendering (markdown through
rich, math as plain text, images and plots as a placeholder naming their file), then the
inspected values of the step's frame and what the step printed. `--step N` or `--section NAME`
prints one step and exits. Without them, on a terminal, the keys move as in the web viewer, by
the same rules (cs336_lectures.runtime.readers.navigation): l/h step, j/k step over, u step out, g go
to a step, / search, n search again, q quit. When stdin or stdout is not a terminal it prints
the first step and exits, so it never waits for keys nobody can press. Colour follows the
terminal and NO_COLOR.

The interactive loop is a few keys read in cbreak mode and a frame redrawn with rich: a TUI
framework would add a dependency and its own event loop for a screen that has no widgets.
"""

from __future__ import annotations

import argparse
import bisect
import io
import os
import re
import select
import shutil
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.rule import Rule
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

from cs336_lectures.runtime.readers.navigation import TraceModel, read_trace
from cs336_lectures.runtime.render.plain_math import plain_math
from cs336_lectures.runtime.trace.format import TraceFormatError
from cs336_lectures.runtime.terminal_text import visible
from cs336_lectures.runtime.trace.value_text import format_value

PROG = "cs336-lectures show"
CONTEXT_ABOVE = 6  # code lines shown above the current one when printing a single step
CONTEXT_BELOW = 10
VALUE_LINES = 4  # lines one value may take on screen
OUTPUT_LINES = 12
MARK = "▶"
KEYS_HELP = "l/h step  j/k over  u out  g go to  / search  n again  q quit"
HTML_TAG = re.compile(r"<[^>]+>")
CLEAR = "\x1b[H\x1b[2J"
ALTERNATE_SCREEN = ("\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l")  # enter (cursor hidden), leave
ARROWS = {"\x1b[C": "l", "\x1b[D": "h", "\x1b[1;2C": "j", "\x1b[1;2D": "k", "\x1bOC": "l", "\x1bOD": "h"}


class ShowError(Exception):
    """A request `show` cannot serve (an unknown section, a trace without steps)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE.json", help="a trace written by 'cs336-lectures trace'")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--step", type=int, metavar="N",
                       help="print step N, counted from 1 as the web viewer counts (the nearest stop to it), and exit")
    where.add_argument("--section", metavar="NAME",
                       help="print the first step of the function NAME, or of the heading containing NAME, and exit")
    parser.add_argument("--width", type=_columns, metavar="COLUMNS",
                        help="draw for this many columns, at least 30 (default: the terminal's)")


def step_index(number: int) -> int:
    """The index of step `number` as people count steps (from 1); 0 and below name the first."""
    return max(number - 1, 0)


def _columns(text: str) -> int:
    if not text.isdigit() or int(text) < 30:
        raise argparse.ArgumentTypeError(f"must be a number of columns, at least 30, not {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    try:
        raw = read_trace(args.trace)
        model = TraceModel(raw)
        if not model.stops:
            raise ShowError(f"{args.trace}: the trace records no steps to show")
        view = StepView(model, Path(args.trace).parent, args.trace)
        interactive = args.step is None and args.section is None and sys.stdin.isatty() and sys.stdout.isatty()
        if interactive:
            return Session(view, width=args.width).run()
        step = model.snap(step_index(args.step)) if args.step is not None else model.stops[0]
        if args.section is not None:
            step = find_section(model, args.section)
        console = Console(width=args.width or None, highlight=False)
        console.print(view.frame(step, CONTEXT_ABOVE, CONTEXT_BELOW))
        return 0
    except (TraceFormatError, ShowError) as error:
        print(visible(f"{PROG}: error: {error}"), file=sys.stderr)
        return 2


def find_section(model: TraceModel, name: str) -> int:
    """The first stop in a call of the function `name`, else at the first heading containing `name`."""
    for s in model.stops:
        if model.function_name(model.step_call[s]) == name:
            return s
    for heading in model.headings:
        if name.lower() in heading.text.lower():
            return model.snap(heading.step)
    functions = sorted({model.function_name(model.step_call[s]) for s in model.stops})
    raise ShowError(f"no function or heading {name!r} in the trace (functions: {', '.join(functions)})")


def search(model: TraceModel, view: StepView, s: int, query: str) -> int:
    """The next stop after s (wrapping around) whose line, or whose rendered text, contains `query`; -1 if none."""
    needle = query.lower()
    order = [t for t in model.stops if t > s] + [t for t in model.stops if t <= s]
    for t in order:
        file, line = model.step_file[t], model.line_of(t)
        if needle in model.lines[file][line - 1].lower() or needle in view.rendered_text(t).lower():
            return t
    return -1


@dataclass
class StepView:
    """Draws one step of a trace as rich renderables."""

    model: TraceModel
    folder: Path  # the trace's folder: asset paths are relative to it
    name: str
    _highlighted: dict[int, list[Text]] = field(default_factory=dict)

    def frame(self, s: int, above: int, below: int) -> RenderableType:
        """Header, code window, values and output of step s."""
        return Group(self.header(s), *(row for row, _ in self.code_window(s, above, below)), *self.details(s))

    def header(self, s: int) -> RenderableType:
        model = self.model
        stack = " › ".join(model.function_name(model.step_call[t]) for t in model.stack(s))
        heading = model.heading_at(s)
        section = f"{model.headings[heading].text} · " if heading >= 0 else ""
        # Counted from 1, as the web viewer's counter and its URL (?at=) count.
        position = f"step {s + 1} of {len(model.steps)} ({bisect.bisect_left(model.stops, s) + 1} of {len(model.stops)} stops)"
        where = f"{model.files[model.step_file[s]]['path']}:{model.line_of(s)}"
        title = Text(visible(f"{model.header.get('title', self.name)} · {position}"))  # a str would be read as markup
        return Group(Rule(title, style="bold"),
                     Text(visible(f"{section}{stack} · {where}"), style="dim", overflow="ellipsis", no_wrap=True))

    def code_window(self, s: int, above: int, below: int) -> list[tuple[RenderableType, bool]]:
        """(row, is_current) for the lines around step s: hidden lines left out, statements that
        render shown as their renderings, as the web viewer does outside raw mode."""
        model = self.model
        file, current = model.step_file[s], model.line_of(s)
        heads = model.heads[file]
        count = len(model.lines[file])
        first, last = max(1, current - above), min(count, current + below)
        first = heads[first]  # never start inside a statement
        rows: list[tuple[RenderableType, bool]] = []
        line = first
        while line <= last:
            end = line
            while end < count and heads[end + 1] == heads[line]:
                end += 1
            is_current = heads[line] <= current <= end
            if (file, heads[line]) in model.rendering_statements:
                rows.extend((row, is_current and i == 0) for i, row in enumerate(self.rendering_rows(file, line, end, s)))
            else:
                for number in range(line, end + 1):
                    if number not in model.hidden[file]:
                        rows.append((self.code_row(file, number, number == current), number == current))
            line = end + 1
        return rows

    def code_row(self, file: int, number: int, current: bool) -> RenderableType:
        if file not in self._highlighted:
            source = "\n".join(visible(line) for line in self.model.lines[file])
            self._highlighted[file] = Syntax(source, "python", theme="ansi_dark").highlight(source).split("\n")
        gutter = Text(f"{MARK if current else ' '}{number:>5} │ ", style="bold yellow" if current else "dim")
        row = Text.assemble(gutter, self._highlighted[file][number - 1])
        if current:
            row.stylize("bold")
        row.no_wrap = True
        row.overflow = "ellipsis"
        return row

    def rendering_rows(self, file: int, first: int, last: int, s: int) -> list[RenderableType]:
        """The renderings a rendering statement (lines first..last) shows at step s, gutter included."""
        rows: list[RenderableType] = []
        for number in range(first, last + 1):
            t = self.model.rendering_step(file, number, s)
            if t < 0:
                continue
            for rendering in self.model.extras(t).get("r", ()):
                rows.append(_Gutter(first, first <= self.model.line_of(s) <= last and self.model.step_file[s] == file,
                                    self.rendering(rendering)))
        return rows

    def rendering(self, rendering: dict) -> RenderableType:
        kind = rendering.get("type")
        if kind == "markdown":
            if rendering.get("verbatim"):
                return Text(visible(rendering.get("source", HTML_TAG.sub("", rendering.get("html", "")))))
            if "source" in rendering:
                return Markdown(visible(plain_math(rendering["source"])))
            return Text(visible(HTML_TAG.sub("", rendering.get("html", ""))))
        if kind == "link":
            title = (visible(rendering["title"]), "underline")
            if "url" in rendering:
                return Text.assemble(("↗ ", "cyan"), title, visible(f" <{rendering['url']}>"))
            path = self.model.files[rendering["file"]]["path"]
            return Text.assemble(("→ ", "cyan"), title, visible(f" ({path}:{rendering['line']})"))
        label = "plot" if kind == "plot" else "image"
        src = rendering.get("src")
        if src is None:
            where = f"unavailable: {rendering.get('error', 'no source')}"
        elif src.startswith("data:"):
            where = "inline in the trace"
        else:
            where = str(self.folder / src)
        return Text(visible(f"[{label}: {rendering.get('alt', '')} — {where}]"), style="magenta")

    def rendered_text(self, s: int) -> str:
        """The plain text of what step s rendered (what search looks through besides the code)."""
        parts = []
        for rendering in self.model.extras(s).get("r", ()):
            parts.append(rendering.get("source") or rendering.get("title") or rendering.get("alt") or "")
        return "\n".join(parts)

    def details(self, s: int) -> list[RenderableType]:
        """The values of step s's frame (those this step wrote marked *) and the step's output."""
        model = self.model
        rows: list[RenderableType] = []
        env = model.environment(s)
        if env:
            rows.append(Rule("values", style="dim"))
            for name, (value, written) in env.items():
                text = visible(format_value(value)).split("\n")
                if len(text) > VALUE_LINES:
                    text = text[:VALUE_LINES - 1] + [f"... ({len(text) - VALUE_LINES + 1} more lines)"]
                changed = written == s
                rows.append(Text.assemble(("* " if changed else "  ", "bold green"),
                                          (visible(name), "bold" if changed else ""), " = ", "\n    ".join(text),
                                          overflow="ellipsis", no_wrap=True))
        extras = model.extras(s)
        printed = (extras.get("o", "") + extras.get("e", "")).rstrip("\n")
        if printed:
            rows.append(Rule("output", style="dim"))
            lines = printed.split("\n")
            if len(lines) > OUTPUT_LINES:
                lines = lines[:OUTPUT_LINES - 1] + [f"... ({len(lines) - OUTPUT_LINES + 1} more lines)"]
            rows.append(Text(visible("\n".join(lines))))
        if "x" in extras:
            error = extras["x"]
            rows.append(Rule("error", style="red"))
            rows.append(Text(visible(f"{error.get('type')}: {error.get('message')}"), style="bold red"))
        return rows


class _Gutter:
    """A rendering drawn to the right of a gutter (the statement's line number, and the mark when current)."""

    def __init__(self, number: int, current: bool, body: RenderableType):
        self.number, self.current, self.body = number, current, body

    def __rich_console__(self, console: Console, options):
        gutter = f"{MARK if self.current else ' '}{self.number:>5} ┃ "
        style = console.get_style("bold yellow" if self.current else "dim")
        lines = [_rstripped(line) for line in console.render_lines(
            self.body, options.update_width(max(10, options.max_width - len(gutter))), pad=False)]
        while lines and not lines[0]:  # rich's markdown opens a list or a heading with an empty line
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        for i, line in enumerate(lines):
            yield Segment(gutter if i == 0 else " " * 6 + " ┃ ", style)
            yield from line
            yield Segment.line()


def _rstripped(line: list) -> list:
    """A rendered line without its trailing padding (markdown pads to the full width)."""
    line = list(line)
    while line and not line[-1].text.rstrip():
        line.pop()
    if line:
        last = line[-1]
        line[-1] = Segment(last.text.rstrip(), last.style, last.control)
    return line


class Session:
    """The interactive viewer: draw the step, read a key, move."""

    def __init__(self, view: StepView, width: int | None = None):
        self.view = view
        self.model = view.model
        self.width = width
        self.step = self.model.stops[0]
        self.message = ""
        self.last_search = ""

    def run(self) -> int:
        resized = []  # SIGWINCH: the terminal changed size, so the frame is drawn again

        previous_handler = signal.signal(signal.SIGWINCH, lambda signum, frame: resized.append(True))
        with _cbreak(sys.stdin.fileno()):
            sys.stdout.write(ALTERNATE_SCREEN[0])
            try:
                while True:
                    resized.clear()  # before drawing: a resize during the draw draws again
                    self.draw()
                    key = _wait_for_key(sys.stdin.fileno(), resized)
                    if key in ("q", "\x04", ""):  # q, Ctrl-D, end of input
                        return 0
                    if key == "\x03":  # Ctrl-C read as a key (a terminal without signals)
                        return 130
                    if key is not None:
                        self.act(key)
            except KeyboardInterrupt:  # Ctrl-C quits too, without a traceback
                return 130
            finally:
                sys.stdout.write(ALTERNATE_SCREEN[1])
                sys.stdout.flush()
                signal.signal(signal.SIGWINCH, previous_handler)

    def act(self, key: str) -> None:
        model, s = self.model, self.step
        self.message = ""
        key = ARROWS.get(key, key.lower() if len(key) == 1 else key)
        moves = {"l": lambda: model.next(s), "h": lambda: model.previous(s), "j": lambda: model.step_over(s, 1),
                 "k": lambda: model.step_over(s, -1), "u": lambda: model.step_out(s)}
        if key in moves:
            target = moves[key]()
            if target >= 0:
                self.step = target
            elif key == "u":
                self.message = "Already in the outermost call."
        elif key == "g":
            answer = self.prompt("go to step: ")
            if answer.strip().isdigit():
                self.step = model.snap(step_index(int(answer)))
            elif answer.strip():
                self.message = f"not a step number: {answer.strip()}"
        elif key in ("/", "n"):
            query = self.prompt("search: ") if key == "/" else self.last_search
            if query:
                self.last_search = query
                target = search(model, self.view, s, query)
                if target >= 0:
                    self.step = target
                else:
                    self.message = f"not found: {query}"

    def prompt(self, label: str) -> str:
        """Read a line in the status row (Enter accepts, Escape cancels)."""
        answer = ""
        while True:
            sys.stdout.write(f"\r\x1b[2K{label}{answer}")
            sys.stdout.flush()
            key = _read_key(sys.stdin.fileno())
            if key in ("\r", "\n"):
                return answer
            if key in ("\x1b", "\x03", ""):
                return ""
            if key in ("\x7f", "\b"):
                answer = answer[:-1]
            elif len(key) == 1 and key.isprintable():
                answer += key

    def draw(self) -> None:
        """Redraw the whole screen: the code window cropped around the current row to fit."""
        size = shutil.get_terminal_size()
        width = self.width or size.columns
        height = max(10, size.lines)
        console = Console(file=io.StringIO(), width=width, force_terminal=True, highlight=False,
                          no_color="NO_COLOR" in os.environ, color_system=None if "NO_COLOR" in os.environ else "standard")

        def lines_of(renderable: RenderableType) -> list[str]:
            console.print(Group(renderable))  # in a Group, a Text keeps its own no_wrap and overflow
            text = console.file.getvalue()
            console.file.seek(0)
            console.file.truncate()
            return text.rstrip("\n").split("\n") if text else []

        s = self.step
        header = lines_of(self.view.header(s))
        details = [line for row in self.view.details(s) for line in lines_of(row)]
        details = details[:max(3, height // 3)]
        status = lines_of(Text(self.message or KEYS_HELP, style="reverse", overflow="ellipsis", no_wrap=True))
        room = height - len(header) - len(details) - len(status)
        code: list[str] = []
        current_at = 0
        for row, is_current in self.view.code_window(s, room, room):
            if is_current:
                current_at = len(code)
            code.extend(lines_of(row))
        start = max(0, min(current_at - room // 3, len(code) - room))
        code = code[start:start + room]
        code += [""] * (room - len(code))
        sys.stdout.write(CLEAR + "\n".join(header + code + details + status))  # the tty adds the \r
        sys.stdout.flush()


@contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    """Keys arrive one by one, unechoed; the terminal is restored whatever happens."""
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _wait_for_key(fd: int, resized: list) -> str | None:
    """The next key, or None as soon as `resized` fills (the frame must be redrawn first)."""
    while not select.select([fd], [], [], 0.25)[0]:
        if resized:
            return None
    return _read_key(fd)


def _read_key(fd: int) -> str:
    """One key press: a character, or an escape sequence (arrows) read whole; '' at end of input."""
    data = os.read(fd, 1)
    if data and data[0] >= 0xC0:  # the lead byte of a UTF-8 character says how many bytes follow
        data += os.read(fd, 1 if data[0] < 0xE0 else 2 if data[0] < 0xF0 else 3)
    if data != b"\x1b":
        return data.decode("utf-8", "replace")
    while select.select([fd], [], [], 0.05)[0]:  # the rest of an escape sequence follows at once
        data += os.read(fd, 1)
        if data[-1:].isalpha() or data[-1:] == b"~":
            break
    return data.decode("utf-8", "replace")
