"""Hostile YAML in the files users and translators write: catalogs and `cs336-lectures.yaml`
(cs336_lectures/runtime/safe_yaml.py). Each is refused with one line naming the file and the problem,
before it can grow (aliases) or recurse (nesting), and never reaches a lecture as its own error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures.runtime.i18n.catalog import CatalogError, catalog_path, load_catalog
from cs336_lectures.runtime.cli.batch import ExecutorError, read_config
from cs336_lectures.runtime.safe_yaml import MAX_DEPTH, YamlFileError, load_yaml_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "lectures" / "example_i18n.py"
DEEP = 20_000


def alias_bomb(levels: int) -> str:
    """`levels` levels of nine-fold aliases: 9**levels strings once expanded (small here, the
    shape is what matters: the same file with nine levels is a billion strings)."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def catalog_with(where: str) -> str:
    """A Russian catalog whose one entry's `where` (a field the loader turns into a string) is `where`."""
    return f"language: ru\nsource: example_i18n.py\nentries:\n- en: Hello\n  translation: Привет\n  where: {where}\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(cwd / "config")}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_ordinary_yaml_still_loads(tmp_path):
    path = tmp_path / "fine.yaml"
    path.write_text("a: [1, {b: [x, y]}]\nc: |\n  two\n  lines\n", encoding="utf-8")
    assert load_yaml_file(path) == {"a": [1, {"b": ["x", "y"]}], "c": "two\nlines\n"}
    path.write_text("", encoding="utf-8")
    assert load_yaml_file(path) is None


@pytest.mark.parametrize("text, problem", [
    (alias_bomb(3), "aliases (*a0) are not allowed here (line 2, column 10)"),
    ("x: " + "[" * DEEP + "]" * DEEP + "\n", f"nested deeper than {MAX_DEPTH} levels"),
    ("x: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n", f"nested deeper than {MAX_DEPTH} levels"),
    ("x: " + "7" * 5000 + "\n", "Exceeds the limit (4300 digits) for integer string conversion"),
    ("x: [\n", "expected the node content, but found '<stream end>' (line 2, column 1)"),
])
def test_hostile_yaml_is_one_line_naming_the_file(tmp_path, text, problem):
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(YamlFileError) as raised:
        load_yaml_file(path)
    assert str(raised.value).startswith(f"{path}: ") and problem in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_catalog_with_aliases_is_refused(tmp_path):
    path = tmp_path / "ru.yaml"
    path.write_text(alias_bomb(2) + catalog_with("*a2"), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"ru.yaml: cannot read the catalog: aliases \(\*a0\) are not allowed"):
        load_catalog(path)


def test_a_config_with_aliases_or_deep_nesting_is_refused(tmp_path):
    path = tmp_path / "cs336-lectures.yaml"
    path.write_text("base: &base [a, b]\nsetup: *base\n", encoding="utf-8")
    with pytest.raises(ExecutorError, match=r"cs336-lectures.yaml: cannot read the configuration: aliases"):
        read_config(path)
    path.write_text("args: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n", encoding="utf-8")
    with pytest.raises(ExecutorError, match=f"cannot read the configuration: nested deeper than {MAX_DEPTH}"):
        read_config(path)


@pytest.mark.slow
def test_i18n_check_and_trace_with_a_deeply_nested_catalog(tmp_path):
    """`i18n check` says one line; `trace` records the fine lecture as fine (the catalog's language
    falls back to English with one warning), not as failing at its text() line."""
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    catalog = catalog_path(tmp_path / EXAMPLE.name, "ru")
    catalog.parent.mkdir(parents=True)
    catalog.write_text(catalog_with("[" * DEEP + "]" * DEEP), encoding="utf-8")
    check = cli("i18n", "check", EXAMPLE.name, cwd=tmp_path)
    assert check.returncode == 2 and check.stdout == ""
    assert check.stderr.strip().splitlines() == [
        f"cs336-lectures i18n: error: locales/ru/example_i18n.yaml: cannot read the catalog: nested deeper than "
        f"{MAX_DEPTH} levels (line 6, column {10 + MAX_DEPTH - 3})"]  # under the catalog, entries, the entry
    trace = cli("trace", EXAMPLE.name, "-o", "out", "--quiet", cwd=tmp_path)
    assert trace.returncode == 0, trace.stderr
    header = json.loads((tmp_path / "out" / "example_i18n.json").read_text())["header"]
    assert header["status"] == "ok"


@pytest.mark.slow
def test_trace_with_a_deeply_nested_config_is_one_line(tmp_path):
    shutil.copy(ROOT / "lectures" / "example_basics.py", tmp_path / "example_basics.py")
    (tmp_path / "cs336-lectures.yaml").write_text("setup: " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    done = cli("trace", "example_basics.py", "--executor", "local", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"cs336-lectures: error: {tmp_path / 'cs336-lectures.yaml'}: cannot read the configuration: nested deeper "
        f"than {MAX_DEPTH} levels (line 1, column {8 + MAX_DEPTH - 1})"]  # under the settings
