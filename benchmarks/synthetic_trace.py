"""A synthetic, schema-valid trace of any size, for measuring the viewer on large traces.

The traced file is a column of 20-line functions. Function 0 (`main`) loops over its body
forever; every seventh line of a body calls another function (three calls deep at most), so
the trace has nested calls, returns into callers, renderings with headings, a hidden line per
function, stdout, and inspected ints and tensors changing at most steps.

    trace = synthetic_trace(num_steps=1_000, num_lines=200)   # a dict, see trace/README.md
    python benchmarks/synthetic_trace.py 100000 2000 -o /tmp/synthetic.json
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import tempfile
from pathlib import Path

LINES_PER_FUNCTION = 20
MAX_DEPTH = 3


def _line_kind(j: int) -> str:
    """What body line j (2..19) of every function does."""
    if j == 2:
        return "heading"
    if j == 5:
        return "tensor"
    if j == 11:
        return "print"
    if j == 16:
        return "text"
    if j == 18:
        return "hidden"
    if j == 19:
        return "return"
    if j % 7 == 0:
        return "call"
    return "assign"


def _callee(function: int, j: int, cycle: int, num_functions: int) -> int:
    return 1 + (function * 7 + j * 3 + cycle) % (num_functions - 1)


def _source(num_functions: int, num_lines: int) -> list[str]:
    lines = []
    for k in range(num_functions):
        lines.append("def main():" if k == 0 else f"def f{k}(x):")
        for j in range(2, LINES_PER_FUNCTION):
            kind = _line_kind(j)
            lines.append({
                "heading": f'    text("## Part {k}: a heading for the contents")',
                "tensor": "    t = torch.randn(4, 4)  # @inspect t",
                "print": "    print(y)",
                "text": f'    text("Some prose about part {k}, with **bold** words and `code`.")',
                "hidden": "    check_invariants(y)  # @hide",
                "return": "    return y",
                "call": f"    y = f{_callee(k, j, 0, num_functions)}(y)  # @inspect y",
                "assign": f"    y = y * {j} + 1  # @inspect y",
            }[kind])
        lines.append("")
    lines += [f"# padding line {i}" for i in range(len(lines) + 1, num_lines + 1)]
    return lines[:num_lines]


def _highlight(line: str) -> str:
    text = html.escape(line)
    for keyword in ("def ", "return "):
        text = text.replace(keyword, f'<span class="tok-k">{keyword.strip()}</span> ')
    return text


def synthetic_trace(num_steps: int = 100_000, num_lines: int = 2_000, seed: int = 0) -> dict:
    """A trace of exactly num_steps steps over one file of num_lines lines (at least 60)."""
    if num_lines < 3 * LINES_PER_FUNCTION:
        raise ValueError(f"num_lines must be at least {3 * LINES_PER_FUNCTION}")
    rng = random.Random(seed)
    num_functions = num_lines // LINES_PER_FUNCTION
    source = _source(num_functions, num_lines)
    functions = [[0, "main" if k == 0 else f"f{k}", k * LINES_PER_FUNCTION + 1] for k in range(num_functions)]
    calls: list[list[int]] = []
    steps: list[list] = []
    storage = 0

    def tensor() -> dict:
        nonlocal storage
        storage += 1
        data = [[round(rng.gauss(0, 1), 4) for _ in range(4)] for _ in range(4)]
        return {"t": "tensor", "dtype": "float32", "shape": [4, 4], "stride": [4, 1], "device": "cpu",
                "requires_grad": False, "contiguous": True, "storage": storage, "offset": 0, "nbytes": 64, "data": data}

    def run(function: int, parent_step: int, depth: int, cycle: int) -> None:
        call = len(calls)
        calls.append([function, parent_step])
        base = function * LINES_PER_FUNCTION
        y = rng.randrange(100)
        while len(steps) < num_steps:
            for j in range(2, LINES_PER_FUNCTION):
                if len(steps) >= num_steps:
                    return
                kind = _line_kind(j)
                extras: dict = {}
                if kind == "heading":
                    anchor = f"part-{function}"
                    extras["r"] = [{"type": "markdown", "html": f'<h2 id="{anchor}">Part {function}</h2>',
                                    "headings": [[2, f"Part {function}", anchor]]}]
                elif kind == "text":
                    extras["r"] = [{"type": "markdown", "html": f"<p>Some prose about part {function}, with "
                                    "<strong>bold</strong> words and <code>code</code>.</p>", "headings": []}]
                elif kind == "tensor":
                    extras["v"] = {"t": tensor()}
                elif kind == "print":
                    extras["o"] = f"{y}\n"
                elif kind in ("assign", "call"):
                    y = (y * j + 1) % 1_000_003
                    extras["v"] = {"y": y}
                steps.append([call, base + j, extras] if extras else [call, base + j])
                if kind == "call" and depth < MAX_DEPTH:
                    run(_callee(function, j, cycle, num_functions), len(steps) - 1, depth + 1, cycle)
                if kind == "return" and function != 0:
                    return
            cycle += 1

    run(0, -1, 0, 0)
    header = {
        "title": f"synthetic-{num_steps}x{num_lines}", "source": "synthetic.py", "entry": "main",
        "created": "2026-01-01T00:00:00Z", "elapsed_s": 0.0, "python": "3.11", "torch": "none",
        "platform": "synthetic", "device": "cpu", "command": ["benchmarks/synthetic_trace.py"], "seed": seed,
        "status": "ok", "num_steps": len(steps),
    }
    file = {"path": "synthetic.py", "source": "\n".join(source) + "\n", "html": [_highlight(l) for l in source],
            "hidden": [k * LINES_PER_FUNCTION + 18 for k in range(num_functions)]}
    return {"format": "cs336-lectures-trace", "version": 1, "header": header, "files": [file],
            "functions": functions, "calls": calls, "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("num_steps", type=int, nargs="?", default=100_000)
    parser.add_argument("num_lines", type=int, nargs="?", default=2_000)
    parser.add_argument("-o", "--output", type=Path, help="where to write the trace (default: only describe it)")
    args = parser.parse_args()
    trace = synthetic_trace(args.num_steps, args.num_lines)
    text = json.dumps(trace, separators=(",", ":"))
    print(f"synthetic trace: {len(trace['steps']):,} steps over {args.num_lines:,} lines, "
          f"{len(trace['calls']):,} calls, {len(text) / 1e6:.1f} MB of JSON")
    if args.output is None:
        return
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=args.output.parent, suffix=".tmp", delete=False) as handle:
        handle.write(text)
    os.chmod(handle.name, 0o644)  # temporary files start private; a trace is for serving
    os.replace(handle.name, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
