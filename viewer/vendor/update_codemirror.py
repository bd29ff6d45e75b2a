"""Refresh the vendored CodeMirror 6 under viewer/vendor/codemirror/ from npm's published packages.

The editor loads these files as they are published (ES modules, no bundler), except that each
bare import (`from '@codemirror/state'`) is rewritten to the file beside it
(`from './state.js'`), which is what a browser without an import map needs. Run it by hand:

    cd "$(mktemp -d)" && npm install --no-save $(python3 VIEWER/vendor/update_codemirror.py --packages)
    python3 VIEWER/vendor/update_codemirror.py node_modules
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parent / "codemirror"
# The packages the editor imports, pinned; their dependencies follow (npm resolves them).
REQUESTED = ["@codemirror/state@6.7.6", "@codemirror/view@6.43.15", "@codemirror/commands@6.11.1",
             "@codemirror/language@6.13.1", "@codemirror/search@6.7.2", "@codemirror/autocomplete@6.20.4",
             "@codemirror/lang-python@6.2.1"]
# Every package that ends up loaded, and the file its module entry becomes here.
FILES = {
    "@codemirror/state": "state.js", "@codemirror/view": "view.js", "@codemirror/commands": "commands.js",
    "@codemirror/language": "language.js", "@codemirror/search": "search.js",
    "@codemirror/autocomplete": "autocomplete.js", "@codemirror/lang-python": "lang-python.js",
    "@codemirror/streamparser": "streamparser.js", "@lezer/common": "lezer-common.js",
    "@lezer/highlight": "lezer-highlight.js", "@lezer/lr": "lezer-lr.js", "@lezer/python": "lezer-python.js",
    "@marijn/find-cluster-break": "find-cluster-break.js", "crelt": "crelt.js", "style-mod": "style-mod.js",
    "w3c-keyname": "w3c-keyname.js",
}
# An import or export statement at the start of a line (the published files put them there),
# never the word inside code or a string.
IMPORT = re.compile(r"""^((?:import|export)\b[^'";]*?\bfrom\s*|import\s*)(['"])([^'"./][^'"]*)\2""", re.MULTILINE)


def module_entry(package: Path) -> Path:
    """The ES module a bundler would pick: exports' "import", else "module", else "main"."""
    meta = json.loads((package / "package.json").read_text())
    exports = meta.get("exports")
    if isinstance(exports, dict):
        exports = exports.get(".", exports)
        if isinstance(exports, dict):
            exports = exports.get("import") or exports.get("default")
    entry = exports if isinstance(exports, str) else meta.get("module") or meta.get("main") or "index.js"
    return package / entry


def rewrite(text: str, name: str) -> str:
    def local(match: re.Match) -> str:
        imported = match.group(3)
        if imported not in FILES:
            raise SystemExit(f"{name} imports {imported}, which is not vendored: add it to FILES")
        return f"{match.group(1)}{match.group(2)}./{FILES[imported]}{match.group(2)}"

    return IMPORT.sub(local, text)


def main(node_modules: Path) -> None:
    shutil.rmtree(TARGET, ignore_errors=True)
    (TARGET / "licenses").mkdir(parents=True)
    versions = {}
    for name, file in FILES.items():
        package = node_modules / name
        meta = json.loads((package / "package.json").read_text())
        versions[name] = meta["version"]
        (TARGET / file).write_text(rewrite(module_entry(package).read_text(), name))
        shutil.copy(package / "LICENSE", TARGET / "licenses" / f"{file.removesuffix('.js')}.LICENSE")
    listing = "\n".join(f"| `{name}` | {versions[name]} | `{file}` | MIT |" for name, file in FILES.items())
    (TARGET / "VERSIONS.md").write_text(
        "# Vendored CodeMirror 6\n\nnpm's published ES modules, unchanged except that bare imports point at the"
        " file beside them. Refreshed by `../update_codemirror.py`.\n\n| package | version | file | licence |\n"
        f"| --- | --- | --- | --- |\n{listing}\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--packages"]:
        print(" ".join(REQUESTED))
    elif len(sys.argv) == 2:
        main(Path(sys.argv[1]))
    else:
        raise SystemExit(__doc__)
