"""The runtime: the machinery behind a lecture's primitives, in layers, lowest first.

- ``lecture/``: what a lecture calls (primitives, directives);
- ``render/``: markdown, math, highlighting, images and plots as static pieces;
- ``i18n/``: catalogs, templates, translation while tracing, run messages;
- ``trace/``: the trace as data (format, values, comparison);
- ``tracing/``: recording a trace (engine, supervisor, ranks);
- ``kernel/``: the warm kernel that forks runs and checkpoints, and its client;
- ``server/``, ``publish/``: serving and re-tracing, the static site;
- ``readers/``, ``notebooks/``, ``course/``: other readers and writers of traces;
- ``cli/``: the command line.

Lectures import the primitives from the package root (``from cs336_lectures import text``).
Modules that lived directly in this folder before it had layers (``cs336_lectures.runtime.tracer``,
``.notebook``, ...) still import, as the modules that replaced them: notebooks exported
before import ``seed_everything`` and ``show_values`` that way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

# The flat module names of the runtime before it had layers, and where each one lives now.
MOVED = {
    "primitives": "cs336_lectures.runtime.lecture.primitives",
    "directives": "cs336_lectures.runtime.lecture.directives",
    "rendering": "cs336_lectures.runtime.render.rendering",
    "assets": "cs336_lectures.runtime.render.assets",
    "passive_svg": "cs336_lectures.runtime.render.passive_svg",
    "math_spans": "cs336_lectures.runtime.render.math_spans",
    "plain_math": "cs336_lectures.runtime.render.plain_math",
    "catalog": "cs336_lectures.runtime.i18n.catalog",
    "templates": "cs336_lectures.runtime.i18n.templates",
    "translatable": "cs336_lectures.runtime.i18n.translatable",
    "translation": "cs336_lectures.runtime.i18n.translation",
    "i18n_cli": "cs336_lectures.runtime.i18n.commands",
    "notes": "cs336_lectures.runtime.i18n.run_messages",
    "trace_format": "cs336_lectures.runtime.trace.format",
    "values": "cs336_lectures.runtime.trace.values",
    "value_text": "cs336_lectures.runtime.trace.value_text",
    "trace_compare": "cs336_lectures.runtime.trace.compare",
    "tracer": "cs336_lectures.runtime.tracing.lecture_run",  # trace_lecture, seed_everything, Tracer, ...
    "supervisor": "cs336_lectures.runtime.tracing.supervisor",
    "ranks": "cs336_lectures.runtime.tracing.ranks",
    "kernel": "cs336_lectures.runtime.kernel.process",
    "kernel_client": "cs336_lectures.runtime.kernel.client",
    "edits": "cs336_lectures.runtime.kernel.edits",
    "server": "cs336_lectures.runtime.server.http_server",  # LectureServer
    "editing": "cs336_lectures.runtime.server.source_files",
    "watch": "cs336_lectures.runtime.server.watch",
    "site": "cs336_lectures.runtime.publish.site",
    "navigation": "cs336_lectures.runtime.readers.navigation",
    "terminal": "cs336_lectures.runtime.readers.terminal",
    "notebook": "cs336_lectures.runtime.notebooks.outputs",
    "cells": "cs336_lectures.runtime.notebooks.cells",
    "export": "cs336_lectures.runtime.notebooks.export",
    "course_compat": "cs336_lectures.runtime.course.compat",
    "course_import": "cs336_lectures.runtime.course.importer",
    "cli": "cs336_lectures.runtime.cli.main",
    "executor": "cs336_lectures.runtime.cli.batch",
    "jobs": "cs336_lectures.runtime.cli.jobs",
    "atomic": "cs336_lectures.atomic",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `cs336_lectures.runtime.<old name>` as the module that replaced it (one object)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        parent, _, name = fullname.rpartition(".")
        if parent != __name__ or name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(MOVED[spec.name.rpartition(".")[2]])

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # the replacing module ran already


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())
