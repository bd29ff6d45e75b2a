"""Reading the YAML files users and translators write (catalogs, `cs336-lectures.yaml`), bounded.

`yaml.safe_load` builds no objects, but it still follows aliases (`[*x, *x, ...]` nine levels
deep is a billion strings from a 14-line file), composes nodes recursively (a file nested 20,000
levels deep raises RecursionError from deep inside PyYAML) and turns a 5,000-digit scalar into an
int (ValueError past Python's digit limit). None of our files needs an alias or more than a few
levels, so the loader refuses aliases and deep nesting while composing, before anything grows,
and every problem comes back as one `YamlFileError` line naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["MAX_DEPTH", "YamlFileError", "load_yaml_file"]

MAX_DEPTH = 64  # catalogs and configs are three or four levels deep


class YamlFileError(ValueError):
    """A YAML file that cannot be read safely: `reason` is one line, the message names the file too."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader without aliases and with a nesting limit."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"aliases (*{event.anchor}) are not allowed here",
                                              event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml_file(path: Path) -> Any:
    """The data in the YAML file at `path` (None when it is empty); YamlFileError when it cannot be
    read, is not YAML, uses an alias, nests too deep or holds a number Python will not convert."""
    try:
        text = path.read_text(encoding="utf-8")
        loader = _BoundedLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise YamlFileError(path, f"{error.problem or error.context}{where}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as error:
        first = str(error).strip().splitlines()
        raise YamlFileError(path, first[0] if first else type(error).__name__) from None
