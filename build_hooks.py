"""setuptools commands that put the viewer and the trace format's contract into the package.

The repository keeps `viewer/` and `trace/` at its top level, where people look for them; an
installed package must carry them too, or `serve` and `build` have no viewer to serve. At build
time `build_py` copies them under `cs336_lectures/share/` in the wheel (the sdist carries the
originals, MANIFEST.in); nothing is copied into the tree. An editable install builds no copy:
the runtime falls back to the clone's own folders (cs336_lectures/resources.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHARED = ("viewer", "trace/schema.json", "trace/README.md")  # paths from the root, the same under share/
SKIPPED = shutil.ignore_patterns(".*", "__pycache__", "*.pyc")


class BuildPyWithViewer(build_py):
    """build_py, plus `viewer/` and `trace/schema.json`, `trace/README.md` under `cs336_lectures/share/`."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            self._shared_outputs = self._copy_shared(Path(self.build_lib) / "cs336_lectures" / "share")

    def _copy_shared(self, share: Path) -> list[str]:
        shutil.rmtree(share, ignore_errors=True)  # no file removed from viewer/ lingers in a rebuilt wheel
        for part in SHARED:
            source, target = ROOT / part, share / part
            if source.is_dir():
                shutil.copytree(source, target, ignore=SKIPPED)
            elif source.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
            else:
                raise FileNotFoundError(f"{part} is missing: the package cannot be built without it")
        return [str(path) for path in share.rglob("*") if path.is_file()]

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *getattr(self, "_shared_outputs", [])]
