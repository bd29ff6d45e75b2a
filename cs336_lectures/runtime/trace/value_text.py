"""Encoded values (trace/README.md, "Values") as short plain text, for places without the web
viewer's values panel: the terminal viewer, notebook outputs and markdown exports.

Plain values read as Python writes them; a tensor or array as its kind, dtype and shape
followed by its elements (or, for a large one, a preview and statistics); a dataclass as a
constructor call. Memory addresses, numbered per trace by the encoder, are numbered again per
text, so that a value reads the same whether it came from a trace or from a live kernel.

    >>> format_value({"t": "tensor", "dtype": "float32", "shape": [2], "data": [1.0, 2.5]})
    'tensor float32 [2]: [1.0, 2.5]'
"""

from __future__ import annotations

import re
from typing import Any

ADDRESS_NUMBER = re.compile(r"0x#\d+")
_OPEN_CLOSE = {"list": ("[", "]"), "tuple": ("(", ")"), "set": ("{", "}"), "frozenset": ("frozenset({", "})")}


def format_value(value: Any) -> str:
    """One encoded value as text."""
    return _renumbered(_text(value))


def format_values(values: dict[str, Any]) -> str:
    """Several named encoded values, one `name = value` per line (addresses numbered across them)."""
    return _renumbered("\n".join(f"{name} = {_text(value)}" for name, value in values.items()))


def _renumbered(text: str) -> str:
    numbers: dict[str, str] = {}
    return ADDRESS_NUMBER.sub(lambda match: numbers.setdefault(match.group(), f"0x#{len(numbers) + 1}"), text)


def _text(value: Any) -> str:
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):  # not an encoded form, but nested tensor data is plain lists
        return "[" + ", ".join(_text(item) for item in value) + "]"
    kind = value.get("t") if isinstance(value, dict) else None
    if kind == "float":
        return _number(value["v"])
    if kind in ("int", "dtype", "device"):
        return str(value["v"])
    if kind == "str":
        return f"{value['v']!r}... ({value['len']:,} characters)"
    if kind == "bytes":
        return value["v"] if len(value["v"]) < 1000 else f"{value['v']}... ({value['len']:,} bytes)"
    if kind in _OPEN_CLOSE:
        opening, closing = _OPEN_CLOSE[kind]
        items = [_text(item) for item in value["items"]]
        if kind == "tuple" and len(items) == 1:
            items[0] += ","
        return opening + ", ".join(items) + _more(value) + closing
    if kind == "dict":
        items = [f"{_text(key)}: {_text(item)}" for key, item in value["items"]]
        return "{" + ", ".join(items) + _more(value) + "}"
    if kind == "dataclass":
        return f"{value['cls']}(" + ", ".join(f"{name}={_text(item)}" for name, item in value["fields"]) + ")"
    if kind in ("tensor", "ndarray"):
        return _array(value)
    if kind in ("finfo", "iinfo"):
        keys = [key for key in ("bits", "min", "max", "eps", "tiny", "resolution") if key in value]
        return f"{kind}({value['dtype']}: " + ", ".join(f"{key}={_number(value[key])}" for key in keys) + ")"
    if kind == "object":
        return value["repr"] if "error" not in value else f"<{value['cls']}: repr failed: {value['error']}>"
    if kind == "truncated":
        return value["repr"]
    return repr(value)


def _more(value: dict) -> str:
    """', ... (N items)' after a container the encoder cut short."""
    shown = len(value["items"])
    return f", ... ({value['len']:,} items)" if value.get("len", shown) > shown else ""


def _number(v: Any) -> str:
    """A number of an encoding: a JSON number, or the name of a non-finite float."""
    return v if isinstance(v, str) else repr(v)


def _array(value: dict) -> str:
    """'tensor float32 [2, 3]:' and the elements, rows of a matrix one per line."""
    shape = "[" + ", ".join(map(str, value.get("shape", []))) + "]"
    head = f"{value['t']} {value.get('dtype', '?')} {shape}"
    if value.get("device") not in (None, "cpu"):
        head += f" on {value['device']}"
    if "data" in value:
        data = value["data"]
        if isinstance(data, list) and data and isinstance(data[0], list):
            rows = ",\n ".join(_nested(row) for row in data)
            return f"{head}:\n[{rows}]"
        return f"{head}: {_nested(data)}"
    preview = ", ".join(_number(x) for x in value.get("preview", []))
    stats = ", ".join(f"{key} {_number(value[key])}" for key in ("min", "max", "mean") if key in value)
    return f"{head}: first {len(value.get('preview', []))} elements [{preview}, ...]; {stats}"


def _nested(data: Any) -> str:
    if isinstance(data, list):
        return "[" + ", ".join(_nested(item) for item in data) + "]"
    return _number(data)
