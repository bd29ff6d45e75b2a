"""`cs336-lectures export`: every shipped lecture exports to a valid notebook and markdown; the
exported lecture 1 runs in a real kernel and reproduces its trace's outputs; the primitives
display inline in a kernel and stay silent in plain Python."""

from __future__ import annotations

import base64
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.runtime.notebooks.cells import lay_out
from cs336_lectures.runtime.notebooks.export import build_notebook
from cs336_lectures.runtime.notebooks.outputs import jupyter_markdown
from trace_builders import demo_trace

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

nbformat = pytest.importorskip("nbformat")
ROOT = Path(__file__).resolve().parents[3]
LECTURES = ["lecture_01", "lecture_02", "example_basics"]
KERNEL_TIMEOUT_S = 600  # per cell: lecture 1 trains small tokenizers; two loaded cores are slow


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def export_lecture(folder: Path, name: str, source: str):
    """Write `source` as NAME.py in `folder`, export it (tracing it first) and read the notebook back."""
    (folder / f"{name}.py").write_text(source)
    result = cli("export", f"{name}.py", cwd=folder)
    assert result.returncode == 0, result.stderr
    return nbformat.read(folder / f"{name}.ipynb", as_version=4)


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    result = cli("trace", *(f"lectures/{name}.py" for name in LECTURES), "-o", str(folder), "--quiet")
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture(scope="module")
def exported(traces, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("exported")
    for name in LECTURES:
        for suffix in ("ipynb", "md"):
            result = cli("export", str(traces / f"{name}.json"), "-o", str(folder / f"{name}.{suffix}"))
            assert result.returncode == 0, result.stderr
            assert result.stderr.strip() == f"{folder / name}.{suffix}: {'ipynb' if suffix == 'ipynb' else 'markdown'} written"
    return folder


def markdown_sources(trace: dict) -> list[str]:
    return [rendering["source"] for step in trace["steps"] if len(step) > 2
            for rendering in step[2].get("r", ()) if rendering["type"] == "markdown" and not rendering.get("verbatim")]


@pytest.mark.parametrize("name", LECTURES)
def test_every_lecture_exports_a_valid_notebook_that_reads_without_running(traces, exported, name):
    notebook = nbformat.read(exported / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    trace = json.loads((traces / f"{name}.json").read_text())
    markdown = "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    shown = markdown + "".join(output.get("data", {}).get("text/markdown", "")
                               for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs)
    for source in markdown_sources(trace):  # every text() shows, its $math$ kept for Jupyter to render
        assert jupyter_markdown(source) in shown
    assert "$" in markdown
    plots = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
             if "image/svg+xml" in output.get("data", {})]
    assert len(plots) == sum(1 for step in trace["steps"] if len(step) > 2
                             for rendering in step[2].get("r", ()) if rendering["type"] == "plot")
    values = [output["data"]["text/plain"] for cell in notebook.cells if cell.cell_type == "code"
              and "show_values(" in cell.source for output in cell.outputs if output.get("output_type") == "display_data"
              and "text/plain" in output["data"] and set(output["data"]) == {"text/plain"}]
    assert values and all(" = " in value for value in values)
    setup = notebook.cells[2]
    assert setup.metadata["jupyter"]["source_hidden"] and "def main" not in setup.source


def test_dollars_that_are_money_are_escaped_for_jupyter(exported):
    assert jupyter_markdown("plans $500 now, $125 a year") == "plans \\$500 now, \\$125 a year"
    kept = "costs $6 N D$ FLOPs, `echo $HOME $PATH`, $$a + b$$, \\$5\n\n$$\nx^2\n$$\n"
    assert jupyter_markdown(kept) == kept
    cells = nbformat.read(exported / "lecture_01.ipynb", as_version=4).cells
    # Literal text() becomes markdown cells; an f-string's text is a display output of its code cell.
    markdown = "".join(cell.source for cell in cells) + "".join(
        output["data"]["text/markdown"] for cell in cells for output in cell.get("outputs", [])
        if "text/markdown" in output.get("data", {}))
    assert "plans \\$500 billion over 4 years, \\$125 billion a year" in markdown
    assert "$$\\text{accuracy} = \\text{efficiency} \\times \\text{resources}$$" in markdown


def test_markdown_export_has_text_code_values_and_images(exported):
    document = (exported / "lecture_01.md").read_text()
    assert "## Why this course exists" in document and "```python\n" in document
    assert "```text\nstring = 'Hello, 🌍! Привет!'\n```" in document
    images = sorted((exported / "lecture_01_files").iterdir())
    assert images and all(f"](lecture_01_files/{image.name})" in document for image in images)
    assert all(image.read_bytes().lstrip().startswith(b"<?xml") for image in images)


def test_lecture_1_values_are_those_of_the_trace(traces, exported):
    notebook = nbformat.read(exported / "lecture_01.ipynb", as_version=4)
    outputs = [output["data"]["text/plain"] for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs if set(output.get("data", {})) == {"text/plain"}]
    assert "gpt4_weights_tb = 3.6" in outputs
    assert "bpe_merges = {(116, 104): 256, (256, 101): 257, (257, 32): 258}" in outputs  # t+h, then th+e, the+space


@pytest.mark.slow
def test_exported_lecture_1_runs_in_a_fresh_kernel_and_reproduces_the_trace(exported, tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    expected = nbformat.read(exported / "lecture_01.ipynb", as_version=4)
    notebook = copy.deepcopy(expected)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel inherits the environment
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    manager = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    NotebookClient(notebook, km=manager, timeout=KERNEL_TIMEOUT_S,
                   resources={"metadata": {"path": str(ROOT / "lectures")}}).execute()

    def comparable(cell) -> list[dict]:  # warnings on stderr depend on the libraries, not the lecture
        return [{key: plot_without_png(value) if key == "data" else value for key, value in output.items()
                 if key != "execution_count"}
                for output in cell.outputs if not (output.output_type == "stream" and output.name == "stderr")]

    def plot_without_png(data: dict) -> dict:
        # a kernel draws a PNG beside each plot's SVG; a trace made by `trace` holds the SVG alone
        return {mime: value for mime, value in data.items() if not (mime == "image/png" and "image/svg+xml" in data)}

    code_cells = [(want, got) for want, got in zip(expected.cells, notebook.cells) if want.cell_type == "code"]
    assert sum(bool(comparable(want)) for want, _ in code_cells) > 100
    for want, got in code_cells:
        assert comparable(got) == comparable(want), want.source


def test_primitives_display_inline_in_a_kernel(tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    import nbformat.v4 as nbf

    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d4944415478da63f8cfc0f01f0005000201e2d3a8f50000000049454e44ae426082")
    (tmp_path / "dot.png").write_bytes(png)
    cells = [
        "from cs336_lectures import Reference, image, link, plot, text\n"
        "from cs336_lectures.tokenization import merge\n"
        "text('Cost: $6 N D$ FLOPs')",
        "link(Reference('BPE', 'https://arxiv.org/abs/1508.07909', authors=['Sennrich'], date='2015'))",
        "link(merge)",
        "from matplotlib.figure import Figure\nfigure = Figure()\nfigure.add_subplot().plot([1, 2])\nplot(figure)",
        "image('dot.png', width=40)",
        "from cs336_lectures.runtime.notebooks.outputs import show_values\nratio = 2.5\nshow_values(ratio=ratio)",
        "def square(n):\n    return n * n\n\nlink(square)",  # defined in a cell: a kernel keeps no file for it
    ]
    notebook = nbf.new_notebook(cells=[nbf.new_code_cell(source) for source in cells])
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    manager = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    NotebookClient(notebook, km=manager, timeout=KERNEL_TIMEOUT_S, resources={"metadata": {"path": str(tmp_path)}}).execute()
    data = [[output.data for output in cell.outputs if output.output_type == "display_data"] for cell in notebook.cells]
    assert data[0] == [{"text/markdown": "Cost: $6 N D$ FLOPs", "text/plain": "Cost: $6 N D$ FLOPs"}]
    assert data[1][0]["text/markdown"] == "[BPE](https://arxiv.org/abs/1508.07909) (Sennrich; 2015)"
    assert data[2][0]["text/markdown"].startswith("`merge`:\n\n```python\ndef merge(")
    assert data[3][0]["image/svg+xml"].lstrip().startswith("<?xml")
    assert base64.b64decode(data[3][0]["image/png"]).startswith(PNG_SIGNATURE)  # shown when the notebook is untrusted
    assert data[4][0]["image/png"] == base64.b64encode(png).decode()
    assert notebook.cells[4].outputs[0].metadata == {"image/png": {"width": 40}}
    assert data[5] == [{"text/plain": "ratio = 2.5"}]
    assert data[6] == [{"text/markdown": "`square`:\n\n```python\ndef square(n):\n    return n * n\n```",
                        "text/plain": "square:\ndef square(n):\n    return n * n"}]


def test_primitives_stay_silent_in_plain_python():
    code = ("import sys\nfrom cs336_lectures import text, link\ntext('# hello')\n"
            "link('https://example.org')\nprint('IPython' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (0, "False\n", "")


def test_export_straight_from_a_lecture(tmp_path):
    out = tmp_path / "basics.ipynb"
    result = cli("export", "lectures/example_basics.py", "-o", str(out))
    assert result.returncode == 0, result.stderr
    notebook = nbformat.read(out, as_version=4)
    nbformat.validate(notebook)
    # JupyterLab shows no SVG of an untrusted notebook: every plot carries a PNG of the same figure.
    plots = [output["data"] for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
             if "image/svg+xml" in output.get("data", {})]
    assert plots
    for data in plots:
        png = base64.b64decode(data["image/png"])
        assert png.startswith(PNG_SIGNATURE) and len(png) > 1000
    markdown = tmp_path / "basics.md"
    assert cli("export", "lectures/example_basics.py", "--to", "markdown", "-o", str(markdown)).returncode == 0
    images = list((tmp_path / "basics_files").iterdir())
    # a document keeps the sharper SVG of a plot, not its PNG copy
    assert len([image for image in images if image.suffix == ".svg"]) == len(plots)
    plot_pngs = {base64.b64decode(data["image/png"]) for data in plots}
    assert not any(image.read_bytes() in plot_pngs for image in images)


def test_bad_input_gets_one_line(tmp_path):
    (tmp_path / "broken.py").write_text("def main(:\n")
    (tmp_path / "notes.json").write_text('{"format": "something"}')
    for args, message in [
        (["export", str(tmp_path / "missing.json")], f"{tmp_path / 'missing.json'}: no such trace file"),
        (["export", str(tmp_path / "notes.json")], f"{tmp_path / 'notes.json'}: not a cs336-lectures-trace file (format 'something')"),
        (["export", str(tmp_path / "broken.py")], f"{tmp_path / 'broken.py'}:1: syntax error: invalid syntax"),
    ]:
        result = cli(*args)
        assert result.returncode == 2
        assert result.stderr.strip() == f"cs336-lectures export: error: {message}"
    assert not list(tmp_path.glob("*.ipynb"))


def test_a_version_1_trace_exports_from_its_html(tmp_path):
    notebook = build_notebook(demo_trace(), tmp_path)
    nbformat.validate(notebook)
    assert notebook.cells[3].cell_type == "markdown" and notebook.cells[3].source.startswith("# Demo lecture")


LAYOUT_SOURCE = '''import math

LIMIT = 3


def main():
    intro()
    looping()
    early()
    shadowing()
    intro_again = 1


def intro():
    """Not shown: a docstring."""
    text("# Intro")
    text("Verbatim", verbatim=True)
    # a comment kept with its statement
    x = math.sqrt(4)  # @inspect x
    text(f"x is {x}")
    poem = """first
  second"""


def looping():
    for i in range(2):  # @inspect i
        total = i  # @inspect total


def early():
    text("## Early")
    return


def shadowing():
    LIMIT = 4


if __name__ == "__main__":
    main()
'''


def test_layout_flattens_sections_that_run_the_same_at_the_top_level():
    layout = lay_out(LAYOUT_SOURCE, "main")
    assert layout.flattened == ("main", "intro", "looping")
    codes = [(s.function, s.markdown, s.code, s.inspected) for s in layout.statements]
    assert codes[0] == ("intro", "# Intro", 'text("# Intro")', ())
    assert layout.statements[1].verbatim and layout.statements[1].markdown == "Verbatim"
    assert codes[2] == ("intro", None, "# a comment kept with its statement\nx = math.sqrt(4)  # @inspect x", ("x",))
    assert codes[3][1] is None  # an f-string is code: it shows when it runs
    assert codes[4][2] == 'poem = """first\n  second"""'  # the string's own lines keep their indentation
    assert codes[5][3] == ("i", "total") and codes[5][2].startswith("for i in range(2):")
    # early() returns; shadowing() binds a name of the module's top level: both stay functions
    assert [s.code for s in layout.statements[6:]] == ["early()", "shadowing()", "intro_again = 1"]
    assert "def early" in layout.setup and "def intro" not in layout.setup and "__main__" not in layout.setup
    assert "def shadowing" in layout.setup and "LIMIT = 3" in layout.setup


def test_a_lecture_without_main_is_laid_out_as_its_top_level(tmp_path):
    notebook = export_lecture(
        tmp_path, "toplevel", 'from cs336_lectures import text\n\ntext("# Top level only")\nx = 2 + 3  # @inspect x\n'
        'for i in range(2):\n    print("i is", i)\ntext("Done: $x = 5$, for $5")\n')
    cells = [(cell.cell_type, cell.source) for cell in notebook.cells[2:]]  # no setup cell: all of it is the lecture
    assert cells == [("code", "from cs336_lectures import text"), ("markdown", "# Top level only"),
                     ("code", "x = 2 + 3  # @inspect x\nshow_values(x=x)"),
                     ("code", 'for i in range(2):\n    print("i is", i)'),
                     ("markdown", "Done: $x = 5$, for \\$5")]
    assert notebook.cells[4].outputs[0].data == {"text/plain": "x = 5"}
    assert notebook.cells[5].outputs[0].text == "i is 0\ni is 1\n"


def test_a_name_deleted_in_its_cell_is_not_shown_at_the_cells_end(tmp_path):
    notebook = export_lecture(tmp_path, "scoped",
        "import tempfile\n\nfrom cs336_lectures import text\n\n\ndef main():\n"
        "    with tempfile.TemporaryDirectory() as folder:\n"
        "        data = [1, 2]  # @inspect data\n"
        "        size = len(data)  # @inspect size\n"
        "        del data\n"
        "        kept = 1  # @inspect kept\n"
        '    text("done")\n')
    cell = next(cell for cell in notebook.cells if "with tempfile" in cell.source)
    assert cell.source.endswith("show_values(size=size, kept=kept)")
    assert [output.data for output in cell.outputs] == [{"text/plain": "size = 2\nkept = 1"}]
    namespace: dict = {}
    for code in [cell.source for cell in notebook.cells if cell.cell_type == "code"]:
        exec(code, namespace)  # top to bottom, as a fresh kernel runs it: every shown name exists
    rebound = lay_out("def main():\n    for i in range(2):  # @inspect i\n        del i\n        i = 5\n", "main")
    assert rebound.statements[0].inspected == ("i",)  # deleted, then bound again: it exists at the end


def test_a_section_binding_a_name_of_the_entry_stays_a_function():
    source = ("def main():\n    y = 1\n    part()\n    z = y + 10  # @inspect z\n    other()\n\n\n"
              "def part():\n    y = 2\n\n\ndef other():\n    w = 3  # @inspect w\n")
    layout = lay_out(source, "main")
    assert layout.flattened == ("main", "other")  # at the top level, part's y would replace main's
    assert [statement.code for statement in layout.statements] == [
        "y = 1", "part()", "z = y + 10  # @inspect z", "w = 3  # @inspect w"]
    namespace: dict = {}
    exec(layout.setup + "\n" + "\n".join(statement.code for statement in layout.statements), namespace)
    assert namespace["z"] == 11


def test_a_section_another_section_also_calls_stays_a_function(tmp_path):
    """Flattened, its def would leave the setup cell and the other section's call would fail."""
    source = ("from cs336_lectures import text\n\n\n"
              "def main():\n    shared()\n    caller()\n\n\n"
              "def shared():\n    text(\"shared\")\n    value = 2  # @inspect value\n\n\n"
              "def caller():\n    shared()\n    done = 3  # @inspect done\n")
    assert lay_out(source, "main").flattened == ("main", "caller")
    notebook = export_lecture(tmp_path, "twice_called", source)
    assert "def shared" in notebook.cells[2].source
    namespace: dict = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)  # as a fresh kernel runs it, top to bottom: no NameError
    assert namespace["done"] == 3


def test_a_name_inspected_before_it_exists_is_not_shown(tmp_path):
    notebook = export_lecture(tmp_path, "early",
        "def main():\n"
        "    a = 1  # @inspect a b\n"
        "    b = a + 1  # @inspect b\n")
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"][1:]  # after the seeding cell
    assert [cell.source for cell in cells] == ["a = 1  # @inspect a b\nshow_values(a=a)",
                                               "b = a + 1  # @inspect b\nshow_values(b=b)"]
    assert [output.data for cell in cells for output in cell.outputs] == [{"text/plain": "a = 1"},
                                                                          {"text/plain": "b = 2"}]
    namespace: dict = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)  # `b` is not bound yet when the first cell ends


def test_values_inspected_in_a_section_that_stays_a_function_are_outputs_of_its_call(tmp_path):
    notebook = export_lecture(tmp_path, "kept",
        "from cs336_lectures import text\n\n\n"
        "def main():\n"
        "    counting()\n"
        '    text("done")\n\n\n'
        "def counting():\n"
        '    text("Counting")\n'
        "    for i in range(3):\n"
        "        square = i * i  # @inspect square\n"
        "        if i == 1:\n"
        "            later = i  # @inspect later\n"
        "    words = sorted(['b', 'a'])  # @inspect words missing\n"
        "    return len(words)  # @inspect words\n")
    assert "counting" not in notebook.metadata["cs336_lectures"]["flattened"]  # it returns
    setup = notebook.cells[2].source
    assert ("        square = i * i  # @inspect square\n        show_values(square=square)\n" in setup
            and "            later = i  # @inspect later\n            show_values(later=later)\n" in setup)
    # `missing` is never bound: the added line shows only `words`; nothing follows the return
    assert "    words = sorted(['b', 'a'])  # @inspect words missing\n    show_values(words=words)\n    return" in setup
    call = next(cell for cell in notebook.cells if cell.source == "counting()")
    shown = [output.data.get("text/markdown") or output.data["text/plain"] for output in call.outputs]
    assert shown == ["Counting", "square = 0", "square = 1", "later = 1", "square = 4", "words = ['a', 'b']"]
    namespace: dict = {}
    printed = []
    import cs336_lectures.runtime.notebooks.outputs as notebook_module
    original = notebook_module.show_values
    try:  # run as a fresh kernel would: the added lines show the same values in the same order
        notebook_module.show_values = lambda **values: printed.append(values)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                exec(cell.source, namespace)
    finally:
        notebook_module.show_values = original
    assert printed == [{"square": 0}, {"square": 1}, {"later": 1}, {"square": 4}, {"words": ["a", "b"]}]
