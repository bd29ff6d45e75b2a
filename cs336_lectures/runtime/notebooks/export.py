"""`cs336-lectures export`: a lecture, or its trace, as a Jupyter notebook or a markdown document.

The notebook follows the layout of cs336_lectures.runtime.notebooks.cells (text in markdown cells, the
lecture's statements in code cells, sections flattened) and fills each code cell's outputs
from the trace: what the statements' steps rendered (and what the functions they called
rendered), printed, and the values `# @inspect` asked for, shown once the statement has run
by a `show_values(...)` line the export adds. Run top to bottom in a fresh kernel, the cells
seed as the tracer did, run the same code in the same order and display the same outputs.
The markdown export walks the finished notebook: its cells in order, the outputs as text,
images written beside it.

    $ cs336-lectures export lectures/lecture_01.py                 # lectures/lecture_01.ipynb
    $ cs336-lectures export var/traces/lecture_01.json --to markdown -o lecture_01.md
"""

from __future__ import annotations

import argparse
import base64
import bisect
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.notebooks.cells import WHOLE_RUN, InspectedInFunction, Layout, Statement, lay_out
from cs336_lectures.runtime.readers.navigation import TraceModel, read_trace
from cs336_lectures.runtime.notebooks.outputs import (data_url_bytes, definition_at, jupyter_markdown, rendering_bundle,
                                              values_bundle)
from cs336_lectures.runtime.trace.format import TraceFormatError
from cs336_lectures.runtime.terminal_text import print_visible

PROG = "cs336-lectures export"
FORMATS = {"ipynb": ".ipynb", "markdown": ".md"}
# in order of preference for the markdown export: a plot's SVG before its PNG copy
IMAGE_FILES = {"image/svg+xml": ".svg", "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif",
               "image/webp": ".webp"}


class ExportError(Exception):
    """Input that cannot be exported; the message says why, in one line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="LECTURE.py|TRACE.json",
                        help="a lecture (traced first, into a temporary folder) or a trace written by 'trace'")
    parser.add_argument("--to", choices=sorted(FORMATS),
                        help="ipynb (a notebook) or markdown (default: from -o's suffix, else ipynb)")
    parser.add_argument("-o", "--output", metavar="OUT",
                        help="the file to write (default: beside the input, named after the trace)")
    parser.add_argument("--section", metavar="NAME", help="for a lecture: trace only this top-level function")
    parser.add_argument("--seed", type=int, metavar="N",
                        help="for a lecture: the seed for random, numpy and torch (default: 0)")


def run(args: argparse.Namespace) -> int:
    """Export; 0 when written, 1 when written from a lecture that failed, 2 when nothing could be written."""
    fmt = args.to or ("markdown" if args.output and args.output.endswith(".md") else "ipynb")
    source = Path(args.input)
    try:
        if source.suffix == ".py":
            path, status = export_lecture(source, fmt, args.output and Path(args.output), args.section, args.seed or 0)
        else:
            if args.section is not None or args.seed is not None:
                raise ExportError("--section and --seed apply to a lecture; a trace is exported as it was traced")
            path, status = export_trace(source, fmt, args.output and Path(args.output))
    except (ExportError, TraceFormatError) as error:
        print_visible(f"{PROG}: error: {error}")
        return 2
    print_visible(f"{path}: {fmt} written" + ("" if status == "ok" else f" (the trace ended with status {status})"))
    return 0 if status == "ok" else 1


def export_lecture(lecture: Path, fmt: str, output: Path | None, section: str | None = None,
                   seed: int = 0) -> tuple[Path, str]:
    """Trace `lecture` into a temporary folder, then export that trace; (written path, trace status)."""
    from cs336_lectures.runtime.lecture.primitives import plots_with_png
    from cs336_lectures.runtime.tracing.lecture_run import TraceSettings, trace_lecture, trace_title
    from cs336_lectures.runtime.tracing.result import LectureError

    output = output or lecture.with_name(trace_title(lecture, section) + FORMATS[fmt])
    with tempfile.TemporaryDirectory(prefix="cs336-export-") as folder:
        try:
            with plots_with_png():  # Jupyter shows an untrusted notebook's figures only as PNG
                settings = TraceSettings(section=section, seed=seed, command=("cs336-lectures", "export", str(lecture)))
                result = trace_lecture(lecture, output_dir=Path(folder), quiet=True, **settings.arguments())
        except LectureError as error:
            raise ExportError(str(error)) from None
        return export_trace(result.path, fmt, output)


def export_trace(trace_path: Path, fmt: str, output: Path | None = None) -> tuple[Path, str]:
    """Export the trace at `trace_path`; (written path, trace status)."""
    import nbformat

    raw = read_trace(trace_path)
    output = output or trace_path.with_suffix(FORMATS[fmt])
    notebook = build_notebook(raw, trace_path.parent)
    nbformat.validate(notebook)
    if fmt == "ipynb":
        _write_text(output, nbformat.writes(notebook))
    else:
        _write_text(output, notebook_markdown(notebook, output))
    return output, raw["header"].get("status", "ok")


def _write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(path, text.encode("utf-8"))
    except OSError as error:
        raise ExportError(f"{path}: cannot write: {error.strerror or error}") from None


# ---------------------------------------------------------------- the notebook


def build_notebook(raw: dict, trace_folder: Path):
    """The notebook of a raw trace: cells from the lecture's source, outputs from its steps."""
    import nbformat.v4 as nbf

    model = TraceModel(raw)
    if not model.steps:
        raise ExportError("the trace records no steps, so there is nothing to export")
    header = raw["header"]
    lecture_file = model.step_file[0]  # the outermost call runs in the lecture
    source = model.files[lecture_file]["source"]
    try:
        layout = lay_out(source, header.get("entry", "main"))
    except SyntaxError as error:
        raise ExportError(f"the lecture in the trace does not parse: {error}") from None
    outputs = _Outputs(model, layout, lecture_file, trace_folder)

    cells = [nbf.new_markdown_cell(_preamble(header, model.files[lecture_file]["path"]))]
    shown_in_functions = {found.first_line: _show_values_call(names) for found, names in outputs.in_functions.items()}
    uses_values = any(statement.inspected for statement in layout.statements) or bool(shown_in_functions)
    imports = "from cs336_lectures.runtime.tracing.seeding import seed_everything\n"
    if uses_values:
        imports += "from cs336_lectures.runtime.notebooks.outputs import show_values\n"
    cells.append(nbf.new_code_cell(f"{imports}\nseed_everything({header.get('seed', 0)})"))
    setup = layout.setup_showing(shown_in_functions) if shown_in_functions else layout.setup
    if setup:
        cells.append(nbf.new_code_cell(setup, metadata={"jupyter": {"source_hidden": True}}))

    code: list[Statement] = []
    markdown: list[str] = []

    def close_code() -> None:
        if code:
            lines = [statement.code for statement in code]
            shown = outputs.shown_names(code[-1])
            if shown:
                lines.append(_show_values_call(shown))
            cells.append(nbf.new_code_cell("\n".join(lines), outputs=outputs.of(code)))
            code.clear()

    def close_markdown() -> None:
        if markdown:
            cells.append(nbf.new_markdown_cell("\n\n".join(markdown)))
            markdown.clear()

    previous_function = None
    for statement in layout.statements:
        if statement.function != previous_function:  # a new section starts new cells
            close_code()
            close_markdown()
        previous_function = statement.function
        if statement.markdown is not None:
            close_code()
            markdown.append(outputs.markdown_of(statement))
            continue
        close_markdown()
        code.append(statement)
        if statement.inspected:
            close_code()
    close_code()
    close_markdown()
    notebook = nbf.new_notebook(cells=cells)
    notebook.metadata.update({
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "cs336_lectures": {"title": header.get("title"), "source": header.get("source"), "seed": header.get("seed", 0),
                           "flattened": list(layout.flattened)},
    })
    return notebook


def _preamble(header: dict, path: str) -> str:
    status = header.get("status", "ok")
    lines = [f"*Exported from `{path}` by cs336-lectures. The outputs come from its trace "
             f"({header.get('created', 'date unknown')}, seed {header.get('seed', 0)}, "
             f"{header.get('num_steps', '?')} steps, status {status}).*",
             "",
             "*Run the cells from the top: the first seeds `random`, `numpy` and `torch` as the tracer did, "
             "the second (collapsed) holds the lecture's imports, helpers and references. "
             "For set orders to match too, start Jupyter with `PYTHONHASHSEED=0`.*"]
    if header.get("message"):
        lines += ["", f"*The traced run stopped early: {header['message']}*"]
    return "\n".join(lines)


def _show_values_call(names: tuple[str, ...]) -> str:
    if all(name.isidentifier() for name in names):
        return "show_values(" + ", ".join(f"{name}={name}" for name in names) + ")"
    return "show_values(**{" + ", ".join(f"{json.dumps(name)}: {name}" for name in names) + "})"


class _Outputs:
    """Which steps each statement's cell stands for, and the notebook outputs they produced."""

    def __init__(self, model: TraceModel, layout: Layout, lecture_file: int, trace_folder: Path):
        self.model = model
        self.layout = layout
        self.trace_folder = trace_folder
        self.position = {id(statement): index for index, statement in enumerate(layout.statements)}
        spans: dict[str, list[Statement]] = {}  # function -> its laid-out statements, in line order
        for statement in layout.statements:
            spans.setdefault(statement.function, []).append(statement)
        first_lines = {function: [statement.first_line for statement in statements]
                       for function, statements in spans.items()}
        whole_run = self.position[id(spans[WHOLE_RUN][0])] if WHOLE_RUN in spans else None
        # The calls whose bodies are laid out as statements (one each: a flattened function is called once).
        laid_out = {c for c in range(len(model.calls)) if model.function_name(c) in spans
                    and model.functions[model.calls[c][0]][0] == lecture_file}
        self.steps_of: dict[int, list[int]] = {}  # statement index -> steps it stands for
        self.last_own_step: dict[int, int] = {}  # statement index -> its last step in its own call
        anchors: dict[int, tuple[int, int] | None] = {}  # call -> (laid-out call, step in it) above it
        for s in range(model.num_steps):
            anchor = self._anchor(s, laid_out, anchors)
            if anchor is None:
                index = whole_run
            else:
                call, step = anchor
                function = model.function_name(call)
                index = self._statement_at(spans[function], first_lines[function], model.line_of(step))
                if index is not None and step == s:
                    self.last_own_step[index] = s
            if index is not None:
                self.steps_of.setdefault(index, []).append(s)
        self._values_in_functions(lecture_file)

    def _values_in_functions(self, lecture_file: int) -> None:
        """Where the values inspected inside functions that stay functions show: `after[t]` lists
        the statements whose runs end at step t (their calls' steps included), with the step whose
        environment holds their values; `in_functions` the names each statement's added line shows
        (those the trace holds at every run of it: the line cannot show a name some run lacks)."""
        model = self.model
        by_line: dict[int, InspectedInFunction] = {}
        for found in self.layout.in_functions:
            by_line.update((line, found) for line in range(found.first_line, found.last_line + 1))
        self.after: dict[int, list[tuple[InspectedInFunction, int]]] = {}
        names: dict[InspectedInFunction, set[str]] = {}
        running: dict[int, tuple[InspectedInFunction, int]] = {}  # call -> statement running in it, its last own step

        def ended(found: InspectedInFunction, last: int, end: int) -> None:
            if "x" in model.extras(last):  # it raised: the line after it never ran
                return
            env = model.environment(last)
            names[found] = names.get(found, set(found.inspected)) & set(env)
            self.after.setdefault(end, []).append((found, last))

        for s in range(model.num_steps):
            call = model.step_call[s]
            for other, (found, last) in list(running.items()):
                inside = found.first_line <= model.line_of(s) <= found.last_line and model.step_file[s] == lecture_file
                if (other == call and not inside) or (other != call and not self._within(call, other)):
                    ended(found, last, s - 1)
                    del running[other]
                elif other == call:
                    running[other] = (found, s)
            found = by_line.get(model.line_of(s)) if model.step_file[s] == lecture_file else None
            if found is not None and call not in running:
                running[call] = (found, s)
        for found, last in running.values():
            ended(found, last, model.num_steps - 1)
        shown = {found: tuple(name for name in found.inspected if name in names.get(found, found.inspected))
                 for found in self.layout.in_functions}
        self.in_functions = {found: names for found, names in shown.items() if names}

    def _within(self, call: int, ancestor: int) -> bool:
        """Whether `call` was made, at any depth, from `ancestor`."""
        while call >= 0:
            call = self.model.call_parent[call]
            if call == ancestor:
                return True
        return False

    def _anchor(self, s: int, laid_out: set[int], anchors: dict) -> tuple[int, int] | None:
        call = self.model.step_call[s]
        if call in laid_out:
            return call, s
        if call not in anchors:
            parent_step = self.model.calls[call][1]
            anchors[call] = None if parent_step < 0 else self._anchor(parent_step, laid_out, anchors)
        return anchors[call]

    def _statement_at(self, statements: list[Statement], first_lines: list[int], line: int) -> int | None:
        """The index of the statement (of one function's) holding `line`, or None (a line between them)."""
        i = bisect.bisect_right(first_lines, line) - 1
        return self.position[id(statements[i])] if i >= 0 and statements[i].last_line >= line else None

    def markdown_of(self, statement: Statement) -> str:
        """The text a `text()` statement showed: the trace's markdown, else the literal (it never ran)."""
        for s in self.steps_of.get(self.position[id(statement)], ()):
            for rendering in self.model.extras(s).get("r", ()):
                if rendering.get("type") == "markdown" and "source" in rendering:
                    text = rendering["source"]
                    return f"```\n{text}\n```" if rendering.get("verbatim") else jupyter_markdown(text)
        return f"```\n{statement.markdown}\n```" if statement.verbatim else jupyter_markdown(statement.markdown)

    def of(self, statements: list[Statement]) -> list:
        """The outputs of a code cell holding `statements`, in the order the run produced them."""
        import nbformat.v4 as nbf

        outputs: list = []
        for statement in statements:
            index = self.position[id(statement)]
            for s in self.steps_of.get(index, ()):
                extras = self.model.extras(s)
                for rendering in extras.get("r", ()):
                    bundle, metadata = rendering_bundle(rendering, self._asset_bytes, self._definition)
                    outputs.append(nbf.new_output("display_data", data=bundle, metadata=metadata))
                for key, name in (("o", "stdout"), ("e", "stderr")):
                    if extras.get(key):
                        _add_stream(outputs, name, extras[key])
                if "x" in extras:
                    error = extras["x"]
                    outputs.append(nbf.new_output("error", ename=error.get("type", "Error"),
                                                  evalue=error.get("message", ""),
                                                  traceback=error.get("traceback", "").splitlines()))
                for found, last in self.after.get(s, ()):
                    shown = self.in_functions.get(found)
                    if shown:
                        env = self.model.environment(last)
                        outputs.append(nbf.new_output("display_data", data=values_bundle({name: env[name][0] for name in shown})))
            if statement.inspected and index in self.last_own_step:
                env = self.model.environment(self.last_own_step[index])
                values = {name: env[name][0] for name in self.shown_names(statement)}
                if values:
                    outputs.append(nbf.new_output("display_data", data=values_bundle(values)))
        return outputs

    def shown_names(self, statement: Statement) -> tuple[str, ...]:
        """The inspected names the statement's cell ends by showing: those the trace holds once it
        ran (a name inspected before it is bound would stop the notebook with a NameError there);
        all of them for a statement the trace never reached."""
        index = self.position[id(statement)]
        if index not in self.last_own_step:
            return statement.inspected
        env = self.model.environment(self.last_own_step[index])
        return tuple(name for name in statement.inspected if name in env)

    def _asset_bytes(self, src: str) -> bytes:
        if src.startswith("data:"):
            return data_url_bytes(src)
        path = self.trace_folder / src
        if not src.startswith("assets/") or ".." in Path(src).parts:
            raise ExportError(f"the trace names an asset outside its assets/ folder: {src}")
        try:
            return path.read_bytes()
        except OSError as error:
            raise ExportError(f"{path}: the trace's asset cannot be read: {error.strerror or error}") from None

    def _definition(self, file: int, line: int) -> str:
        return definition_at(self.model.files[file]["source"], line)


def _add_stream(outputs: list, name: str, text: str) -> None:
    """Append printed text, joining it to a stream output of the same name just before (as Jupyter does)."""
    import nbformat.v4 as nbf

    if outputs and outputs[-1].get("output_type") == "stream" and outputs[-1].get("name") == name:
        outputs[-1]["text"] += text
    else:
        outputs.append(nbf.new_output("stream", name=name, text=text))


# ---------------------------------------------------------------- markdown


def notebook_markdown(notebook, output: Path) -> str:
    """The notebook as one markdown document; its images go to OUTPUT_STEM_files/ beside it."""
    folder = output.with_name(output.stem + "_files")
    parts: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
            continue
        code = f"```python\n{cell.source}\n```"
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            code = f"<details><summary>The lecture's imports, helpers and references</summary>\n\n{code}\n\n</details>"
        parts.append(code)
        for output in cell.get("outputs", ()):
            parts.append(_output_markdown(output, folder))
    return "\n\n".join(part for part in parts if part) + "\n"


def _output_markdown(output: Any, folder: Path) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _fenced(output["text"].rstrip("\n"), "text")
    if kind == "error":
        return _fenced(f"{output['ename']}: {output['evalue']}", "text")
    data = output.get("data", {})
    if "text/markdown" in data:
        return data["text/markdown"]
    for mime, suffix in IMAGE_FILES.items():
        if mime in data:
            content = data[mime].encode("utf-8") if mime == "image/svg+xml" else base64.b64decode(data[mime])
            name = hashlib.sha256(content).hexdigest()[:16] + suffix
            try:
                folder.mkdir(parents=True, exist_ok=True)
                write_bytes_atomically(folder / name, content)
            except OSError as error:
                raise ExportError(f"{folder / name}: cannot write: {error.strerror or error}") from None
            alt = data.get("text/plain", "").strip("[]")
            return f"![{alt}]({folder.name}/{name})"
    return _fenced(data.get("text/plain", "").rstrip("\n"), "text")


def _fenced(text: str, language: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"
