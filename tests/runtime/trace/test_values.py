"""The value encoder: exact where JSON can be, bounded always, schema-valid, never raising."""

from __future__ import annotations

import collections
import dataclasses
import gc
import json
import math
import os
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst

from cs336_lectures.runtime.trace.values import BUDGET, MAX_ITEMS, MAX_OVERSHOOT, ValueEncoder, decode

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "trace" / "schema.json").read_text())
VALUE_VALIDATOR = jsonschema.Draft202012Validator(
    {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": "#/$defs/value"}
)
MAX_ENCODED_CHARS = BUDGET + MAX_OVERSHOOT  # the budget, and at most the item in flight when it ran out
# Mutation runs (tests/mutation/run_mutmut.py) run these tests once per mutant: fewer examples each.
EXAMPLES_SCALE = float(os.environ.get("CS336_HYPOTHESIS_SCALE", "1"))


def examples(count: int) -> int:
    return max(10, round(count * EXAMPLES_SCALE))


def encoded_size(value) -> int:
    """Characters of an encoded value as a trace holds it (UTF-8 JSON, not ASCII escapes)."""
    return len(json.dumps(value, ensure_ascii=False, allow_nan=False))


def encode(obj):
    """Encode with a fresh encoder and check what every encoding must satisfy: within the budget,
    valid against the schema."""
    value = ValueEncoder().encode(obj)
    assert encoded_size(value) <= MAX_ENCODED_CHARS
    VALUE_VALIDATOR.validate(value)
    return value


def same(a, b) -> bool:
    """Equality that tells 1 from True from 1.0, list from tuple, -0.0 from 0.0, and nan equals nan."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return a == b


# ---------------------------------------------------------------- property tests

hashables = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20) | st.binary(max_size=20),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=8,
)
exact_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**3000), max_value=2**3000)
    | st.floats()
    | st.text(max_size=60)
    | st.binary(max_size=60),
    lambda inner: st.lists(inner, max_size=6)
    | st.lists(inner, max_size=6).map(tuple)
    | st.sets(hashables, max_size=6)
    | st.frozensets(hashables, max_size=6)
    | st.dictionaries(hashables, inner, max_size=6),
    max_leaves=40,
)


def nesting(obj) -> int:
    if isinstance(obj, dict):
        return 1 + max((max(nesting(k), nesting(v)) for k, v in obj.items()), default=0)
    if isinstance(obj, (list, tuple, set, frozenset)):
        return 1 + max((nesting(item) for item in obj), default=0)
    return 0


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exact_values)
def test_exact_values_round_trip(obj):
    value = encode(obj)
    if nesting(obj) <= 6:
        assert same(decode(value), obj)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.text() | st.binary(max_size=3000) | st.integers(min_value=-(2**20000), max_value=2**20000) | st.floats(),
        lambda inner: st.lists(inner, max_size=150) | st.dictionaries(st.text(max_size=5), inner, max_size=150),
        max_leaves=400,
    )
)
def test_large_values_are_bounded(obj):
    value = ValueEncoder().encode(obj)
    assert encoded_size(value) <= BUDGET + MAX_OVERSHOOT
    VALUE_VALIDATOR.validate(value)


@pytest.mark.parametrize("name, obj", [
    ("long strings", ["x" * 1000] * 150),
    ("control characters, escaped six times over", ["\x01" * 1000] * 150),
    ("quotes", ['"' * 1000] * 150),
    ("bytes", [b"\x00" * 1000] * 150),
    ("floats", [[1 / 3] * 100] * 100),
    ("numpy floats", [[np.float64(1 / 3)] * 100] * 100),
    ("17-digit integers", [[-(2**52)] * 100] * 100),
    ("big integers", [[10**300] * 100] * 100),
    ("long keys", {f"{'k' * 990}{i}": "v" * 1000 for i in range(150)}),
    ("nested strings", [[["x" * 1000] * 100] * 100] * 100),
    ("small arrays", [np.random.rand(16, 16)] * 150),
    ("reprs", [type("Wordy", (), {"__repr__": lambda self: "\x01" * 5000})()] * 150),
])
def test_the_budget_is_what_a_large_value_takes_in_the_trace(name, obj):
    value = encode(obj)
    # Large inputs fill the budget and stop there: a budget twice as large would fail the upper bound.
    assert BUDGET - MAX_OVERSHOOT <= encoded_size(value) <= BUDGET + MAX_OVERSHOOT, name
    assert value["len"] > len(value["items"])


TORCH_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                torch.int8, torch.uint8, torch.bool, torch.complex64]


@st.composite
def tensors(draw):
    shape = draw(st.lists(st.integers(0, 24), max_size=4))
    dtype = draw(st.sampled_from(TORCH_DTYPES))
    x = (torch.randn(shape) * 100).to(dtype) if dtype != torch.complex64 else torch.randn(shape, dtype=dtype)
    if draw(st.booleans()) and x.dim() >= 2:
        x = x.transpose(0, 1)
    if draw(st.booleans()) and x.dim() >= 1 and x.shape[0] > 1:
        x = x[1:]
    if draw(st.booleans()) and x.is_floating_point():
        x = x.clone().requires_grad_(True)
    if draw(st.booleans()) and x.is_floating_point() and x.numel():
        x = x.detach().clone()
        x[(0,) * x.dim()] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    return x


arrays = npst.arrays(
    dtype=npst.boolean_dtypes() | npst.integer_dtypes() | npst.unsigned_integer_dtypes()
    | npst.floating_dtypes() | npst.complex_number_dtypes(),
    shape=npst.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=20),
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tensors() | arrays, max_size=3))
def test_tensors_and_arrays_encode(items):
    value = encode(items)
    for item, encoded in zip(items, value["items"]):
        assert encoded["shape"] == list(item.shape)
        assert ("data" in encoded) == (math.prod(item.shape) <= 256)


@dataclasses.dataclass(frozen=True)
class Frozen:
    label: str
    weight: float


class Unprintable:
    def __repr__(self):
        raise ValueError("unprintable")


anything = st.recursive(
    exact_values
    | tensors()
    | arrays
    | st.builds(Frozen, st.text(max_size=5), st.floats())
    | st.builds(Unprintable)
    | st.sampled_from([torch.float16, torch.device("cpu"), torch.finfo(torch.float32), np.iinfo(np.int16), len, object]),
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4) | st.builds(Frozen, st.text(max_size=3), st.floats(allow_nan=False)), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anything)
def test_anything_encodes_and_decodes_without_raising(obj):
    value = encode(obj)
    assert isinstance(decode(value), decoded_type(value))


DECODED_TYPES = {"float": float, "int": int, "str": str, "dtype": str, "device": str, "bytes": bytes, "list": list,
                 "tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict, "dataclass": dict,
                 "tensor": dict, "ndarray": dict, "finfo": dict, "iinfo": dict}


def decoded_type(value) -> type | tuple[type, ...]:
    """What decode() gives for an encoding: plain JSON as itself, tagged kinds by their tag."""
    if not isinstance(value, dict):
        return type(value)
    if value["t"] in ("object", "truncated"):
        return (str, type(None))  # the repr, or None when it failed
    return DECODED_TYPES[value["t"]]


# ---------------------------------------------------------------- scalars and text


def test_small_values_are_plain_json():
    for obj in (None, True, False, 0, -7, 2**53 - 1, "", "hello", "é" * 1000):
        assert encode(obj) == obj


def test_floats_are_tagged_with_special_values_as_strings():
    assert encode(1.0) == {"t": "float", "v": 1.0}
    assert encode(float("nan")) == {"t": "float", "v": "nan"}
    assert encode(float("-inf")) == {"t": "float", "v": "-inf"}
    assert math.isinf(decode(encode(float("inf"))))


def test_big_integers():
    assert encode(2**53) == {"t": "int", "v": str(2**53)}
    assert decode(encode(-(3**100))) == -(3**100)
    huge = encode(7**20000)  # more digits than str() allows by default
    assert huge["t"] == "object" and "bits" in huge["repr"]


def test_long_strings_and_bytes_are_truncated_with_their_length():
    assert encode("x" * 1500) == {"t": "str", "v": "x" * 1000, "len": 1500}
    assert encode(b"\x00ab") == {"t": "bytes", "v": repr(b"\x00ab"), "len": 3}
    assert decode(encode(bytearray(b"xyz"))) == b"xyz"
    long = encode(b"z" * 5000)
    assert long["len"] == 5000 and len(decode(long)) == 1000


def test_lone_surrogates_still_serialize_as_utf8():
    value = encode("a\ud800b")
    assert value == {"t": "str", "v": "a\\ud800b", "len": 3}  # the surrogate written out as its escape
    assert json.dumps(value, ensure_ascii=False).encode("utf-8").decode("utf-8") == json.dumps(value, ensure_ascii=False)


def test_numpy_scalars_become_numbers():
    assert encode(np.int64(5)) == 5
    assert encode(np.float32(0.5)) == {"t": "float", "v": 0.5}
    assert encode(np.bool_(True)) is True


def test_float32_and_narrower_keep_their_shortest_digits():
    # The digits that give back the same float32, not the float64 expansion 0.10000000149011612.
    assert encode(np.float32(0.1)) == {"t": "float", "v": 0.1}
    assert encode(np.float16(0.1)) == {"t": "float", "v": 0.1}
    assert encode(np.float64(0.1)) == {"t": "float", "v": 0.1}
    assert encode(np.array([0.1, 0.7], dtype=np.float32))["data"] == [0.1, 0.7]
    assert encode(np.array(0.3, dtype=np.float32))["data"] == 0.3
    assert encode(torch.tensor([0.1, 0.7]))["data"] == [0.1, 0.7]
    assert encode(torch.tensor(0.3))["data"] == 0.3
    assert encode(torch.tensor(0.1, dtype=torch.float16))["data"] == 0.099975586  # float16's 0.1, as float32 digits
    assert encode(torch.tensor([0.1], dtype=torch.float64))["data"] == [0.1]


# ---------------------------------------------------------------- containers


def test_containers_keep_their_kind():
    value = encode({"a": [1, (2, 3)], (4, 5): {6}, "f": frozenset({"x"})})
    assert decode(value) == {"a": [1, (2, 3)], (4, 5): {6}, "f": frozenset({"x"})}
    assert value["t"] == "dict" and value["items"][0] == ["a", {"t": "list", "items": [1, {"t": "tuple", "items": [2, 3]}]}]


def test_containers_show_at_most_100_items_and_say_how_many_there_were():
    value = encode(list(range(250)))
    assert value["items"] == list(range(MAX_ITEMS)) and value["len"] == 250
    assert encode({i: i for i in range(101)})["len"] == 101
    assert "len" not in encode(list(range(100)))


def test_sets_are_listed_in_sorted_order():
    assert encode({"pear", "apple", "fig"})["items"] == ["apple", "fig", "pear"]
    mixed = encode({1, "a", (2,)})  # not comparable with each other, still deterministic
    assert mixed == encode({(2,), "a", 1})


def test_nesting_deeper_than_six_is_truncated():
    obj = [[[[[[[["deep"]]]]]]]]
    value = encode(obj)
    for _ in range(6):
        assert value["t"] == "list"
        value = value["items"][0]
    assert value["t"] == "truncated" and value["cls"] == "list"


def test_cycles_stop():
    cyclic = [1]
    cyclic.append(cyclic)
    assert encode(cyclic)["items"][1] == {"t": "truncated", "cls": "list", "repr": "[...]"}
    mapping = {}
    mapping["me"] = mapping
    assert encode(mapping)["items"][0][1]["repr"] == "{...}"


def test_huge_nested_values_stay_small():
    strings = encode([["x" * 1000] * 100] * 100)
    assert strings["len"] == 100 and len(strings["items"]) < 100
    assert all(item == "x" * 1000 for row in strings["items"] for item in row["items"])
    numbers = encode([[list(range(100))] * 100] * 100)
    assert numbers["len"] == 100 and numbers["items"][0]["items"][0] == {"t": "list", "items": list(range(100))}


# ---------------------------------------------------------------- records and objects


@dataclasses.dataclass
class Point:
    x: int
    y: list


@dataclasses.dataclass
class Lazy:
    ready: int
    later: int = dataclasses.field(init=False)


def test_dataclasses_and_namedtuples():
    assert encode(Point(1, [2])) == {"t": "dataclass", "cls": "Point", "fields": [["x", 1], ["y", {"t": "list", "items": [2]}]]}
    assert decode(encode(Point(1, [2]))) == {"x": 1, "y": [2]}
    Pair = collections.namedtuple("Pair", "left right")
    assert decode(encode(Pair(1, "b"))) == {"left": 1, "right": "b"}
    unset = encode(Lazy(1))["fields"][1]
    assert unset[0] == "later" and unset[1]["repr"] is None and "AttributeError" in unset[1]["error"]


class BrokenRepr:
    def __repr__(self):
        raise RuntimeError("no repr for you")


class Opaque:
    pass


def test_objects_use_a_bounded_repr_without_addresses():
    broken = encode(BrokenRepr())
    assert broken == {"t": "object", "cls": "BrokenRepr", "repr": None, "error": "RuntimeError: no repr for you"}
    first, second = Opaque(), Opaque()
    encoder = ValueEncoder()
    a, b, a_again = encoder.encode(first), encoder.encode(second), encoder.encode(first)
    assert a["repr"].endswith("Opaque object at 0x#1>") and b["repr"].endswith("at 0x#2>")
    assert a_again == a
    assert len(encode(type("Wordy", (), {"__repr__": lambda self: "w" * 5000})())["repr"]) <= 1000


def test_never_raises_on_hostile_objects():
    class Hostile:
        def __repr__(self):
            return self.missing

        def __len__(self):
            raise ValueError("no len")

        __iter__ = __len__

    class HostileList(list):
        def __iter__(self):
            raise KeyError("iteration")

    assert encode(Hostile())["repr"] is None
    assert encode(HostileList([1]))["error"].startswith("KeyError")


# ---------------------------------------------------------------- tensors and arrays


def test_small_tensor_has_full_data_and_layout():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    value = encode(x)
    assert value == {
        "t": "tensor", "dtype": "float32", "shape": [2, 3], "stride": [3, 1], "device": "cpu",
        "requires_grad": False, "contiguous": True, "storage": 0, "offset": 0, "nbytes": 24,
        "data": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
    }
    assert decode(value)["data"] == x.tolist()


def test_views_share_a_storage_id_and_report_their_offset():
    encoder = ValueEncoder()
    x = torch.arange(12.0).reshape(3, 4)
    y = torch.zeros(5)
    a, b, c, d = (encoder.encode(t) for t in (x, x[1:], x.t(), y))
    assert a["storage"] == b["storage"] == c["storage"] != d["storage"]
    assert b["offset"] == 4 and c["stride"] == [1, 4] and c["contiguous"] is False


def test_a_freed_storage_does_not_lend_its_id():
    encoder = ValueEncoder()
    first = encoder.encode(torch.ones(3))["storage"]
    gc.collect()
    assert encoder.encode(torch.ones(3))["storage"] != first


def test_large_tensor_gets_preview_and_statistics():
    x = torch.arange(2000, dtype=torch.float32).reshape(40, 50).t()  # not contiguous
    value = encode(x)
    assert "data" not in value and len(value["preview"]) == 64
    assert value["preview"] == x.reshape(-1)[:64].tolist()
    assert (value["min"], value["max"], value["mean"]) == (0.0, 1999.0, 999.5)


def test_tensor_kinds_do_not_crash():
    nan = torch.tensor([math.nan, math.inf, 1.0])
    assert encode(nan)["data"] == ["nan", "inf", 1.0]
    assert encode(torch.tensor(2.5))["data"] == 2.5
    assert encode(torch.empty(0, 3))["data"] == []
    assert encode(torch.tensor([True, False]))["data"] == [True, False]
    assert encode(torch.ones(300, dtype=torch.bool))["mean"] == 1.0
    assert encode(torch.tensor([1 + 2j]))["data"] == [[1.0, 2.0]]
    assert encode(torch.ones(2, dtype=torch.bfloat16))["dtype"] == "bfloat16"
    meta = encode(torch.empty(4, 4, device="meta"))
    assert meta["device"] == "meta" and "data" not in meta and meta["nbytes"] == 64
    assert encode(torch.eye(3).to_sparse())["data"] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    # A large sparse tensor is described, never densified (that could take gigabytes).
    big_sparse = encode(torch.eye(40).to_sparse())
    assert big_sparse["shape"] == [40, 40] and big_sparse["nbytes"] == 6400
    assert "data" not in big_sparse and "preview" not in big_sparse
    grad = encode(torch.ones(2, requires_grad=True) * 2)
    assert grad["requires_grad"] is True and grad["data"] == [2.0, 2.0]
    parameter = encode(torch.nn.Parameter(torch.tensor([0.5, -1.0, 0.0])))
    assert parameter["t"] == "tensor" and parameter["requires_grad"] is True and parameter["data"] == [0.5, -1.0, 0.0]
    float8 = encode(torch.full((300,), 0.3, dtype=torch.float8_e4m3fn))
    assert float8["dtype"] == "float8_e4m3fn" and float8["nbytes"] == 300 and len(float8["preview"]) == 64
    assert float8["preview"] == [0.3125] * 64  # e4m3's nearest to 0.3
    assert "min" not in float8  # torch has no min() or mean() for float8: no statistics


def test_numpy_arrays():
    encoder = ValueEncoder()
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    whole, view, other = encoder.encode(a), encoder.encode(a[1:, ::2]), encoder.encode(np.ones(2))
    assert whole["t"] == "ndarray" and whole["stride"] == [4, 1] and whole["data"][2] == [8, 9, 10, 11]
    assert view["storage"] == whole["storage"] != other["storage"]
    assert view["offset"] == 4 and view["stride"] == [4, 2] and view["contiguous"] is False
    big = encode(np.linspace(0, 1, 1001))
    assert len(big["preview"]) == 64 and big["max"] == 1.0
    assert encode(np.array(["a", "b"]))["t"] == "object"


def test_dtypes_devices_and_number_formats():
    assert encode(torch.float16) == {"t": "dtype", "v": "torch.float16"}
    assert encode(np.dtype("float32")) == {"t": "dtype", "v": "float32"}
    assert encode(torch.device("cpu")) == {"t": "device", "v": "cpu"}
    finfo = encode(torch.finfo(torch.bfloat16))
    assert finfo["t"] == "finfo" and finfo["bits"] == 16 and finfo["eps"] == 0.0078125
    assert encode(torch.iinfo(torch.int8)) == {"t": "iinfo", "dtype": "int8", "bits": 8, "max": 127, "min": -128}
    assert encode(np.iinfo(np.uint64))["max"] == 2**64 - 1
    assert encode(np.finfo(np.float16))["tiny"] == float(np.finfo(np.float16).smallest_normal)
    assert encode(torch.Size([2, 3])) == {"t": "tuple", "items": [2, 3]}


def test_same_inputs_give_the_same_encoding():
    def run():
        encoder = ValueEncoder()
        x = torch.arange(4.0)
        return [encoder.encode(obj) for obj in (x, x[2:], Opaque, {"b", "a"}, torch.zeros(2))]

    assert run() == run()


def test_decode_refuses_what_is_not_an_encoding():
    with pytest.raises(ValueError, match="not an encoded value"):
        decode({"x": 1})
    with pytest.raises(ValueError, match="unknown value kind"):
        decode({"t": "mystery"})
