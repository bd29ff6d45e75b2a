"""The package and the viewer have no import circles, and no module grows past a size a reader
can hold in mind. Imports under `if TYPE_CHECKING:` are for type hints only and do not count."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cs336_lectures"
VIEWER_JS = ROOT / "viewer" / "js"
MAX_MODULE_LINES = 700


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, modules: set[str]) -> set[str]:
    """The package's modules imported anywhere in the tree (inside functions too), except for type checking."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                elif node.module in modules:
                    found.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def python_graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: _imports(ast.parse(path.read_text(encoding="utf-8")), modules) - {name}
            for name, path in files.items()}


JS_IMPORT = re.compile(r"""(?:^\s*import\b[^'"]*?\bfrom\s*|^\s*import\s*|\bimport\(\s*)['"](\./[\w.-]+\.js)['"]""", re.M)


def javascript_graph() -> dict[str, set[str]]:
    return {path.name: {target[2:] for target in JS_IMPORT.findall(path.read_text(encoding="utf-8"))} - {path.name}
            for path in VIEWER_JS.glob("*.js")}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graphs_see_the_imports_they_are_built_from():
    python = python_graph()
    assert "cs336_lectures.runtime.tracing.engine" in python["cs336_lectures.runtime.tracing.lecture_run"]
    assert "cs336_lectures.runtime.cli.batch" in python["cs336_lectures.runtime.cli.main"]  # a lazy import counts
    assert "trace.js" in javascript_graph()["main.js"]


def test_no_import_circle_in_the_package():
    assert cycles(python_graph()) == []


def test_no_import_circle_in_the_viewer():
    assert cycles(javascript_graph()) == []


def test_no_module_is_longer_than_a_reader_can_hold():
    long = {str(path.relative_to(ROOT)): count for path in [*PACKAGE.rglob("*.py"), *VIEWER_JS.glob("*.js")]
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_import_paths_from_before_the_layers_still_work():
    """Notebooks exported before the runtime had layers import these; lectures the package root."""
    import subprocess
    import sys

    code = ("from cs336_lectures.runtime.tracer import seed_everything, trace_lecture\n"
            "from cs336_lectures.runtime.notebook import show_values\n"
            "from cs336_lectures import text, image, link, plot, solution, load_trace\n"
            "import cs336_lectures.runtime.tracer as old, cs336_lectures.runtime.tracing.lecture_run as new\n"
            "assert old is new and callable(seed_everything) and callable(show_values)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_test_modules_have_names_of_their_own():
    """The test folders are not packages: pytest imports each test module by its file name alone."""
    import collections

    names = collections.Counter(path.name for path in (ROOT / "tests").rglob("test_*.py") if "fixtures" not in path.parts)
    assert [name for name, count in names.items() if count > 1] == []
