"""When two traces of the same lecture say the same thing: the contract of incremental re-runs.

A trace the kernel produced by resuming from a checkpoint must equal a fresh `cs336-lectures
trace` of the same file, except for what may differ between any two runs:

- the header's timing and invocation fields (`created`, `elapsed_s`, `command`);
- what a lecture marks as measured times with `@measured` on the line (`t = clock()  # @inspect t
  @measured`): the values, renderings and output of those steps.

    >>> first_difference(comparable(incremental), comparable(fresh))  # parsed JSON of two traces
    None
"""

from __future__ import annotations

import copy
import warnings

from cs336_lectures.runtime.lecture.directives import parse_directives

RUN_SPECIFIC_HEADER = ("created", "elapsed_s", "command")
MEASURED_EXTRAS = ("v", "r", "o", "e")


def comparable(trace: dict) -> dict:
    """A copy of the trace (as parsed JSON) without what may differ between two faithful runs."""
    trace = copy.deepcopy(trace)
    for field in RUN_SPECIFIC_HEADER:
        trace["header"].pop(field, None)
    measured_lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for file in trace["files"]:
            directives = parse_directives(file["source"])
            measured_lines.append({line for line, directive in directives.items() if directive.measured})
    for step in trace["steps"]:
        if len(step) > 2:
            file = trace["functions"][trace["calls"][step[0]][0]][0]
            if step[1] in measured_lines[file]:
                for key in MEASURED_EXTRAS:
                    step[2].pop(key, None)
    return trace


def first_difference(a: dict, b: dict) -> str | None:
    """Where two comparable traces first differ, in a line, or None when they are equal."""
    if a == b:
        return None
    for key in sorted(a.keys() | b.keys()):
        if a.get(key) != b.get(key):
            left, right = a.get(key), b.get(key)
            if isinstance(left, list) and isinstance(right, list):
                for index, (x, y) in enumerate(zip(left, right)):
                    if x != y:
                        return f"{key}[{index}]: {str(x)[:300]} != {str(y)[:300]}"
                return f"{key}: {len(left)} entries != {len(right)}"
            if isinstance(left, dict) and isinstance(right, dict):
                inner = first_difference(left, right)
                return f"{key}.{inner}"
            return f"{key}: {str(left)[:300]} != {str(right)[:300]}"
    return "?"
