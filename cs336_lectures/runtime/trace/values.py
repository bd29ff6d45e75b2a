"""Values: any Python object as a small JSON value, exact where JSON can be exact.

The tracer records inspected variables after every line, so this runs constantly and on
anything a lecture holds: numbers, strings, nested containers, dataclasses, tensors of any
size, objects whose repr raises. The encoding (trace/README.md, "Values") is plain JSON when
that is exact and a tagged object (``{"t": kind, ...}``) otherwise. It never raises and
never grows without bound: strings, containers, nesting, reprs and tensor contents are all
capped, and a whole value has a size budget. Tensors carry their layout (stride, storage
offset, an id for the underlying storage) because lectures teach exactly that.

Conventions beyond trace/README.md: strides are in elements for numpy arrays too (as in
torch); complex elements are [real, imag] pairs; float32 and narrower floats are written with
the shortest digits that give back the same float32 (0.1, not 0.10000000149011612); sets are
listed in sorted order so traces do not depend on string hashing.

    >>> encoder = ValueEncoder()
    >>> encoder.encode([1, 2.5, "a"])
    {'t': 'list', 'items': [1, {'t': 'float', 'v': 2.5}, 'a']}
    >>> decode(encoder.encode({"x": (1, 2)}))
    {'x': (1, 2)}
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import enum
import heapq
import itertools
import json
import math
import re
import reprlib
import sys
import warnings
import weakref
from typing import Any, Callable

__all__ = ["ValueEncoder", "decode"]

MAX_EXACT_INT = 2**53  # integers JSON readers (JavaScript) hold exactly
MAX_INT_BITS = 3300  # about 1,000 decimal digits; str() of larger ints is slow (and refused past 4,300)
MAX_STRING = 1000  # characters of a string, and of a repr
MAX_BYTES = 1000
MAX_ITEMS = 100  # items shown of a container
MAX_DEPTH = 6  # containers nested deeper become "truncated"
MAX_SORTED_SET = 10_000  # larger sets are listed in iteration order
MAX_TENSOR_DATA = 256  # elements; bigger tensors get a preview and statistics
PREVIEW = 64
# Output characters one value may take, as JSON; containers stop adding items when it runs out,
# so the encoding exceeds it by at most the item in flight (MAX_OVERSHOOT, tested).
BUDGET = 50_000
NODE_COST = 20  # an int of up to 17 digits, a bool or null, and its comma
FLOAT_COST = 40  # {"t":"float","v":0.3333333333333333},
CONTAINER_COST = 24  # {"t":"list","items":[]}
ELEMENT_COST = 20
MAX_OVERSHOOT = 8_000  # a string of MAX_STRING control characters, escaped, and the open containers

ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,16}\b")
_short_repr = reprlib.Repr()  # for containers nested too deep: a glimpse, not the whole
_short_repr.maxlevel = 2
_short_repr.maxstring = _short_repr.maxother = _short_repr.maxlong = 60
_CYCLE_REPR = {"list": "[...]", "tuple": "(...)", "set": "{...}", "frozenset": "frozenset({...})", "dict": "{...}"}


class ValueEncoder:
    """Encodes values for one trace; it numbers tensor storages and memory addresses consistently."""

    def __init__(self) -> None:
        self._addresses: dict[str, str] = {}
        self._storages: dict[tuple, tuple[int, Callable[[], bool]]] = {}
        self._storage_count = 0
        self._budget = BUDGET
        self._open: set[int] = set()  # ids of the containers being encoded, to stop at cycles

    def encode(self, obj: Any) -> Any:
        """`obj` as a JSON-able value (see trace/README.md); never raises.

        >>> ValueEncoder().encode(float("nan"))
        {'t': 'float', 'v': 'nan'}
        """
        kind = type(obj)  # the common small cases first, without any set-up
        if kind is int and -MAX_EXACT_INT < obj < MAX_EXACT_INT:
            return obj
        if kind is str and len(obj) <= MAX_STRING and obj.isascii():
            return obj
        if kind is float:
            return _float(obj)
        if obj is None or kind is bool:
            return obj
        self._budget = BUDGET
        self._open.clear()
        return self._encode(obj, 0)

    # ------------------------------------------------------------ dispatch

    def _encode(self, obj: Any, depth: int) -> Any:
        self._budget -= NODE_COST
        kind = type(obj)
        if kind is int and -MAX_EXACT_INT < obj < MAX_EXACT_INT:
            return obj
        if kind is float:
            self._budget -= FLOAT_COST - NODE_COST
            return _float(obj)
        if obj is None or kind is bool:
            return obj
        try:
            method = _BY_TYPE.get(kind)
            if method is not None:
                return method(self, obj, depth)
            return self._other(obj, depth)
        except BaseException as error:  # a broken __repr__, property... (SystemExit too)
            return _failure(obj, error)

    def _other(self, obj: Any, depth: int) -> Any:
        # torch and numpy are looked up, never imported: a lecture without them pays nothing.
        for name, encode in (("torch", self._torch_value), ("numpy", self._numpy_value)):
            module = sys.modules.get(name)
            if module is not None:
                try:
                    encoded = encode(obj, module, depth)
                except BaseException:  # an exotic subclass (masked array, nested tensor): its repr will do
                    return self._object(obj)
                if encoded is not None:
                    return encoded
        if isinstance(obj, enum.Enum):
            return self._object(obj)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            fields = [(field.name, lambda name=field.name: getattr(obj, name)) for field in dataclasses.fields(obj)]
            return self._record(obj, fields, depth)
        if isinstance(obj, tuple) and isinstance(getattr(type(obj), "_fields", None), tuple):  # namedtuple
            fields = [(name, lambda name=name: getattr(obj, name)) for name in type(obj)._fields]
            return self._record(obj, fields, depth)
        for base, method in _BY_TYPE.items():
            if isinstance(obj, base):
                return method(self, obj, depth)
        if isinstance(obj, collections.deque):
            return self._sequence(obj, depth, "list")
        return self._object(obj)

    # ------------------------------------------------------------ scalars and text

    def _int(self, obj: int, depth: int) -> Any:
        obj = int(obj)
        if -MAX_EXACT_INT < obj < MAX_EXACT_INT:
            return obj
        bits = obj.bit_length()
        if bits <= MAX_INT_BITS:
            digits = str(obj)
            self._budget -= len(digits) + CONTAINER_COST
            return {"t": "int", "v": digits}
        digits = int(bits * math.log10(2)) + 1
        return {"t": "object", "cls": "int", "repr": f"<int of {bits} bits, about {digits} decimal digits>"}

    def _float(self, obj: float, depth: int) -> Any:
        self._budget -= FLOAT_COST - NODE_COST
        return _float(float(obj))

    def _str(self, obj: str, depth: int) -> Any:
        obj = str.__str__(obj)
        self._budget -= _json_length(obj[:MAX_STRING])
        if len(obj) <= MAX_STRING and _is_utf8(obj):
            return obj
        return {"t": "str", "v": _utf8_safe(obj[:MAX_STRING]), "len": len(obj)}

    def _bytes(self, obj: bytes | bytearray, depth: int) -> Any:
        shown = repr(bytes(obj[:MAX_BYTES]))
        self._budget -= _json_length(shown)
        return {"t": "bytes", "v": shown, "len": len(obj)}

    # ------------------------------------------------------------ containers

    def _list(self, obj: list, depth: int) -> Any:
        return self._sequence(obj, depth, "list")

    def _tuple(self, obj: tuple, depth: int) -> Any:
        return self._sequence(obj, depth, "tuple")

    def _set(self, obj: set | frozenset, depth: int) -> Any:
        kind = "frozenset" if isinstance(obj, frozenset) else "set"
        return self._sequence(_first_items_in_order(obj), depth, kind, size=len(obj), container=obj)

    def _sequence(self, items, depth: int, kind: str, size: int | None = None, container=None) -> Any:
        container = items if container is None else container
        if depth >= MAX_DEPTH or id(container) in self._open:
            return self._truncated(container, kind)
        self._budget -= CONTAINER_COST
        self._open.add(id(container))
        try:
            encoded = []
            for item in itertools.islice(items, MAX_ITEMS):
                if self._budget <= 0:
                    break
                encoded.append(self._encode(item, depth + 1))
        finally:
            self._open.discard(id(container))
        size = len(container) if size is None else size
        value = {"t": kind, "items": encoded}
        if len(encoded) < size:
            value["len"] = size
        return value

    def _dict(self, obj: dict, depth: int) -> Any:
        if depth >= MAX_DEPTH or id(obj) in self._open:
            return self._truncated(obj, "dict")
        self._budget -= CONTAINER_COST
        self._open.add(id(obj))
        try:
            pairs = []
            for key, item in itertools.islice(obj.items(), MAX_ITEMS):
                if self._budget <= 0:
                    break
                pairs.append([self._encode(key, depth + 1), self._encode(item, depth + 1)])
        finally:
            self._open.discard(id(obj))
        value = {"t": "dict", "items": pairs}
        if len(pairs) < len(obj):
            value["len"] = len(obj)
        return value

    def _record(self, obj: Any, fields: list[tuple[str, Callable[[], Any]]], depth: int) -> Any:
        """A dataclass or namedtuple: its class name and (field, value) pairs."""
        if depth >= MAX_DEPTH or id(obj) in self._open:
            return self._truncated(obj, "dataclass")
        self._budget -= CONTAINER_COST
        self._open.add(id(obj))
        try:
            encoded = []
            for name, read in fields[:MAX_ITEMS]:
                if self._budget <= 0:
                    break
                try:
                    item = self._encode(read(), depth + 1)
                except BaseException as error:  # a field that was never set
                    item = _failure(None, error)
                encoded.append([name, item])
        finally:
            self._open.discard(id(obj))
        return {"t": "dataclass", "cls": _class_name(obj), "fields": encoded}

    def _truncated(self, obj: Any, kind: str) -> Any:
        if id(obj) in self._open:  # a container that contains itself
            text = _CYCLE_REPR.get(kind, f"<{_class_name(obj)} ...>")
        else:
            text = self._clean_repr(_short_repr.repr(obj))
        return {"t": "truncated", "cls": _class_name(obj), "repr": text}

    # ------------------------------------------------------------ objects

    def _object(self, obj: Any) -> Any:
        try:
            text = repr(obj)
        except BaseException as error:
            return _failure(obj, error)
        text = self._clean_repr(text)
        self._budget -= _json_length(text)
        return {"t": "object", "cls": _class_name(obj), "repr": text}

    def _clean_repr(self, text: str) -> str:
        """Bounded, valid UTF-8, with memory addresses replaced by 0x#1, 0x#2, ... in order of appearance."""
        text = ADDRESS.sub(self._address_number, text[: 4 * MAX_STRING])
        if len(text) > MAX_STRING:
            text = text[: MAX_STRING - 3] + "..."
        return _utf8_safe(text)

    def _address_number(self, match: re.Match) -> str:
        address = match.group(0).lower()
        if address not in self._addresses:
            self._addresses[address] = f"0x#{len(self._addresses) + 1}"
        return self._addresses[address]

    # ------------------------------------------------------------ torch

    def _torch_value(self, obj: Any, torch, depth: int) -> Any:
        if isinstance(obj, torch.Tensor):
            return self._tensor(obj, torch)
        if isinstance(obj, torch.dtype):
            return {"t": "dtype", "v": str(obj)}
        if isinstance(obj, torch.device):
            return {"t": "device", "v": str(obj)}
        if isinstance(obj, torch.finfo):
            return _finfo(obj, str(obj.dtype))
        if isinstance(obj, torch.iinfo):
            return _iinfo(obj, str(obj.dtype))
        return None

    def _tensor(self, tensor, torch) -> dict:
        x = tensor.detach()
        value = {
            "t": "tensor",
            "dtype": str(x.dtype).removeprefix("torch."),
            "shape": list(x.shape),
            "stride": _attempt(lambda: list(x.stride()), []),
            "device": str(x.device),
            "requires_grad": bool(tensor.requires_grad),
            "contiguous": _attempt(x.is_contiguous, False),
            "storage": self._tensor_storage(tensor),
            "offset": _attempt(x.storage_offset, 0),
            "nbytes": x.numel() * x.element_size(),
        }
        if not x.is_meta:
            with warnings.catch_warnings():  # the lecture's stderr is recorded; keep it the lecture's
                warnings.simplefilter("ignore")
                _attempt(lambda: self._tensor_contents(value, x, torch), None)
        return value

    def _tensor_storage(self, tensor) -> int:
        try:
            from torch.multiprocessing.reductions import StorageWeakRef

            storage = tensor.untyped_storage()
            ref = StorageWeakRef(storage)
            return self._storage_number(("torch", str(tensor.device), storage._cdata), lambda: not ref.expired())
        except Exception:  # sparse and other layouts without a storage: the tensor is its own identity
            ref = weakref.ref(tensor)
            return self._storage_number(("tensor", id(tensor)), lambda: ref() is not None)

    def _tensor_contents(self, value: dict, x, torch) -> None:
        count = x.numel()
        if x.layout != torch.strided:
            if count > MAX_TENSOR_DATA:
                return
            x = x.to_dense()
        if x.is_quantized:
            x = x.dequantize()
        if count <= MAX_TENSOR_DATA:
            value["data"] = _finite_tree(_tensor_list(_plain_tensor(x, torch), torch))
            self._budget -= ELEMENT_COST * count
            return
        value["preview"] = _finite_tree(_tensor_list(_plain_tensor(_head(x, PREVIEW), torch), torch))  # complex: pairs
        self._budget -= ELEMENT_COST * PREVIEW
        if x.is_complex():
            return
        if x.is_floating_point():
            low, high, mean = x.min().item(), x.max().item(), x.mean().item()
        else:  # integers and bools; their sum accumulates in int64
            low, high, mean = int(x.min().item()), int(x.max().item()), x.sum().item() / count
        value.update(min=_number(low), max=_number(high), mean=_number(mean))

    # ------------------------------------------------------------ numpy

    def _numpy_value(self, obj: Any, np, depth: int) -> Any:
        if isinstance(obj, np.ndarray):
            return self._ndarray(obj, np)
        if isinstance(obj, np.generic):
            return self._numpy_scalar(obj, np, depth)
        if isinstance(obj, np.dtype):
            return {"t": "dtype", "v": str(obj)}
        if isinstance(obj, np.finfo):
            return _finfo(obj, str(obj.dtype), tiny=obj.smallest_normal)
        if isinstance(obj, np.iinfo):
            return _iinfo(obj, str(obj.dtype))
        return None

    def _numpy_scalar(self, obj: Any, np, depth: int) -> Any:
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return self._int(int(obj), depth)
        if isinstance(obj, np.floating):
            self._budget -= FLOAT_COST - NODE_COST
            # numpy prints float32 and narrower with their own shortest digits: 0.1, not 0.10000000149011612.
            return _float(float(str(obj)) if obj.itemsize <= 4 else float(obj))
        if isinstance(obj, (np.str_, np.bytes_)):
            return self._encode(obj.item(), depth)
        return self._object(obj)

    def _ndarray(self, array, np) -> dict:
        if array.dtype.kind not in "biufc":  # strings, objects, dates, records: their repr says it best
            return self._object(array)
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        ref = weakref.ref(root)
        itemsize = array.itemsize
        strides = list(array.strides)
        if itemsize and all(stride % itemsize == 0 for stride in strides):
            strides = [stride // itemsize for stride in strides]
        start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        value = {
            "t": "ndarray",
            "dtype": str(array.dtype),
            "shape": list(array.shape),
            "stride": strides,
            "device": "cpu",
            "requires_grad": False,
            "contiguous": bool(array.flags.c_contiguous),
            "storage": self._storage_number(("numpy", id(root)), lambda: ref() is not None),
            "offset": max(0, start // itemsize) if itemsize else 0,
            "nbytes": int(array.nbytes),
        }
        if array.size <= MAX_TENSOR_DATA:
            value["data"] = _finite_tree(_array_list(_plain_array(array, np), np))
            self._budget -= ELEMENT_COST * array.size
            return value
        value["preview"] = _finite_tree(_array_list(_plain_array(array.flat[:PREVIEW], np), np))  # complex: pairs
        self._budget -= ELEMENT_COST * PREVIEW
        if array.dtype.kind != "c":
            with np.errstate(all="ignore"):  # inf - inf in the mean must not warn on the lecture's stderr
                low, high, mean = array.min().item(), array.max().item(), float(array.mean())
            if array.dtype.kind == "b":
                low, high = int(low), int(high)
            value.update(min=_number(low), max=_number(high), mean=_number(mean))
        return value

    # ------------------------------------------------------------ storage identity

    def _storage_number(self, key: tuple, alive: Callable[[], bool]) -> int:
        """A small number per storage, in order of first appearance; a freed storage's address
        reused by a new one gets a new number."""
        known = self._storages.get(key)
        if known is not None and known[1]():
            return known[0]
        number = self._storage_count
        self._storage_count += 1
        self._storages[key] = (number, alive)
        return number


_BY_TYPE: dict[type, Callable[[ValueEncoder, Any, int], Any]] = {
    int: ValueEncoder._int,
    float: ValueEncoder._float,
    str: ValueEncoder._str,
    bytes: ValueEncoder._bytes,
    bytearray: ValueEncoder._bytes,
    list: ValueEncoder._list,
    tuple: ValueEncoder._tuple,
    set: ValueEncoder._set,
    frozenset: ValueEncoder._set,
    dict: ValueEncoder._dict,
}


# ---------------------------------------------------------------- helpers


def _float(x: float) -> dict:
    return {"t": "float", "v": x if math.isfinite(x) else _non_finite_name(x)}


def _number(x: int | float) -> int | float | str:
    """A number as the schema's `number`: finite as is, nan and infinities as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return _non_finite_name(x)
    return x


def _non_finite_name(x: float) -> str:
    """'nan', 'inf' or '-inf': how the trace writes the floats JSON has no numbers for."""
    return "nan" if x != x else ("inf" if x > 0 else "-inf")


def _finite_tree(data: Any) -> Any:
    """Nested lists of numbers with nan/inf as strings (JSON has no such numbers)."""
    if isinstance(data, list):
        return [_finite_tree(item) for item in data]
    if isinstance(data, float):
        return _number(data)
    if isinstance(data, (bool, int)):
        return data
    return _number(float(data))  # numpy or torch scalars that tolist() left as they were


def _plain_tensor(x, torch):
    """A tensor whose tolist() gives bools, ints or floats: complex as [real, imag] pairs, low-precision floats widened."""
    if x.is_complex():
        x = torch.view_as_real(x.resolve_conj())
    if x.is_floating_point() and x.dtype not in (torch.float32, torch.float64):
        x = x.float()
    return x


def _tensor_list(x, torch) -> list:
    """x.tolist(), with float32 elements written as their shortest float32 digits (0.1, not 0.10000000149011612)."""
    x = x.detach().cpu()
    if x.dtype != torch.float32:
        return x.tolist()
    import numpy as np

    return _array_list(x.numpy(), np)


def _array_list(a, np) -> list:
    """a.tolist(), with float32 elements written as their shortest float32 digits."""
    if a.dtype == np.float32:
        return a.astype(str).astype(np.float64).tolist()
    return a.tolist()


def _plain_array(a, np):
    """An array whose tolist() gives plain numbers: complex as [real, imag] pairs, other float widths as float32 or float64."""
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], axis=-1).astype(np.float64)
    if a.dtype.kind == "f" and a.dtype not in (np.float32, np.float64):
        return a.astype(np.float32 if a.dtype.itemsize < 4 else np.float64)
    return a


def _head(x, count: int):
    """The first `count` elements of a large tensor in row-major order, copying only about that many."""
    while x.dim() > 1 and x.numel() // x.shape[0] >= count:
        x = x[0]
    if x.dim() > 1:
        row = x.numel() // x.shape[0]
        x = x[: -(-count // row)]
    else:
        x = x[:count]
    return x.reshape(-1)[:count]


def _first_items_in_order(items: set | frozenset) -> list:
    """Up to MAX_ITEMS items of a set in sorted order, so the trace does not depend on hashing.

    Sets larger than MAX_SORTED_SET are shown in iteration order: ordering them would cost
    milliseconds on every inspected line.
    """
    if len(items) > MAX_SORTED_SET:
        return list(itertools.islice(items, MAX_ITEMS))
    try:
        return heapq.nsmallest(MAX_ITEMS, items)
    except BaseException:  # items that do not compare with each other
        return sorted(items, key=lambda item: (type(item).__name__, _attempt(lambda: repr(item), "")))[:MAX_ITEMS]


def _finfo(info, dtype: str, tiny=None) -> dict:
    return {
        "t": "finfo",
        "dtype": dtype,
        "bits": int(info.bits),
        "max": _number(float(info.max)),
        "min": _number(float(info.min)),
        "eps": _number(float(info.eps)),
        "tiny": _number(float(info.tiny if tiny is None else tiny)),
        "resolution": _number(float(info.resolution)),
    }


def _iinfo(info, dtype: str) -> dict:
    return {"t": "iinfo", "dtype": dtype, "bits": int(info.bits), "max": int(info.max), "min": int(info.min)}


def _failure(obj: Any, error: BaseException) -> dict:
    try:
        message = f"{type(error).__name__}: {error}"
    except BaseException:
        message = type(error).__name__
    cls = "NoneType" if obj is None else _class_name(obj)
    return {"t": "object", "cls": cls, "repr": None, "error": _utf8_safe(message[:MAX_STRING])}


def _class_name(obj: Any) -> str:
    name = getattr(type(obj), "__qualname__", None)
    return name if isinstance(name, str) else type(obj).__name__


def _json_length(text: str) -> int:
    """Characters of `text` as a JSON string in a trace (escapes count; UTF-8 text is kept as is)."""
    return len(json.encoder.encode_basestring(text))


def _attempt(function: Callable[[], Any], default: Any) -> Any:
    try:
        return function()
    except BaseException:
        return default


def _is_utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:  # lone surrogates, which no JSON writer can put in UTF-8
        return False


def _utf8_safe(text: str) -> str:
    return text if _is_utf8(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


# ---------------------------------------------------------------- decoding


def decode(value: Any) -> Any:
    """An encoded value back as plain Python data.

    Floats (nan/inf too), big ints, strings, bytes, lists, tuples, sets and dicts come back as
    themselves (truncated ones as the part that was kept); a dataclass becomes a dict of its
    fields; a tensor or array a dict of its encoding with numbers decoded ('data' as nested
    lists, or 'preview'); dtypes and devices their name; other objects their repr.

    >>> decode({"t": "tuple", "items": [1, {"t": "float", "v": "inf"}]})
    (1, inf)
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict) or not isinstance(value.get("t"), str):
        raise ValueError(f"not an encoded value: {value!r:.100}")
    kind = value["t"]
    if kind == "float":
        return _decode_number(value["v"])
    if kind == "int":
        return int(value["v"])
    if kind in ("str", "dtype", "device"):
        return value["v"]
    if kind == "bytes":
        return ast.literal_eval(value["v"])
    if kind == "list":
        return [decode(item) for item in value["items"]]
    if kind == "tuple":
        return tuple(decode(item) for item in value["items"])
    if kind in ("set", "frozenset"):
        items = [_hashable(decode(item)) for item in value["items"]]
        return set(items) if kind == "set" else frozenset(items)
    if kind == "dict":
        return {_hashable(decode(key)): decode(item) for key, item in value["items"]}
    if kind == "dataclass":
        return {name: decode(item) for name, item in value["fields"]}
    if kind in ("tensor", "ndarray", "finfo", "iinfo"):
        decoded = dict(value)
        for key in ("data", "preview"):
            if key in decoded:
                decoded[key] = _decode_nested(decoded[key])
        for key in ("min", "max", "mean", "eps", "tiny", "resolution"):
            if key in decoded:
                decoded[key] = _decode_number(decoded[key])
        return decoded
    if kind in ("object", "truncated"):
        return value["repr"]
    raise ValueError(f"unknown value kind {kind!r}")


def _decode_number(v: Any) -> int | float:
    return float(v) if isinstance(v, str) else v


def _decode_nested(data: Any) -> Any:
    if isinstance(data, list):
        return [_decode_nested(item) for item in data]
    return _decode_number(data)


def _hashable(key: Any) -> Any:
    """A decoded key usable in a dict or set: lists become tuples, dicts tuples of pairs."""
    if isinstance(key, (list, tuple)):
        return tuple(_hashable(item) for item in key)
    if isinstance(key, dict):
        return tuple((k, _hashable(v)) for k, v in key.items())
    if isinstance(key, (set, frozenset)):
        return frozenset(_hashable(item) for item in key)
    return key
