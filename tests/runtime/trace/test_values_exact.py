"""The value encoder, exactly: whole encodings compared, truncation and budget boundaries to the item.

test_values.py checks what every encoding must satisfy (bounded, schema-valid, round trip);
these pin down what a trace shows for each kind of value, so that a mistake that still gives a
plausible encoding (a wrong class name, a float where an int belongs, one item too many) fails.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
import torch

from cs336_lectures.runtime.trace.values import (
    decode,
    BUDGET,
    CONTAINER_COST,
    ELEMENT_COST,
    MAX_STRING,
    NODE_COST,
    PREVIEW,
    ValueEncoder,
)


def encode(obj):
    return ValueEncoder().encode(obj)


def assert_exact(value, expected) -> None:
    """Equal as the trace's JSON: 1 and 1.0, True and 1 differ."""
    assert json.dumps(value) == json.dumps(expected)


def array_layout(dtype: str, shape: list[int], stride: list[int], nbytes: int, contiguous: bool = True) -> dict:
    return {
        "t": "ndarray", "dtype": dtype, "shape": shape, "stride": stride, "device": "cpu",
        "requires_grad": False, "contiguous": contiguous, "storage": 0, "offset": 0, "nbytes": nbytes,
    }


# ---------------------------------------------------------------- dataclasses


@dataclasses.dataclass
class Node:
    child: object = None


@dataclasses.dataclass
class Padded:
    pad: list
    last: int = 1


@dataclasses.dataclass
class Lazy:
    later: int = dataclasses.field(init=False)


def node_chain(length: int) -> Node:
    node = Node()
    for _ in range(length - 1):
        node = Node(node)
    return node


def nested_fields(depth: int, innermost: dict) -> dict:
    value = innermost
    for _ in range(depth):
        value = {"t": "dataclass", "cls": "Node", "fields": [["child", value]]}
    return value


def test_dataclasses_nested_deeper_than_six_are_truncated_at_the_seventh():
    expected = nested_fields(6, {"t": "truncated", "cls": "Node", "repr": "Node(child=Node(child=None))"})
    assert_exact(encode(node_chain(8)), expected)


def test_a_dataclass_that_contains_itself_stops_at_once():
    node = Node()
    node.child = node
    assert_exact(encode(node), nested_fields(1, {"t": "truncated", "cls": "Node", "repr": "<Node ...>"}))


def test_the_same_dataclass_twice_is_shown_twice():
    leaf = Node(1)
    shown = {"t": "dataclass", "cls": "Node", "fields": [["child", 1]]}
    assert_exact(encode([leaf, leaf]), {"t": "list", "items": [shown, shown]})


def test_a_field_never_set_is_an_error_of_NoneType():
    assert_exact(encode(Lazy()), {"t": "dataclass", "cls": "Lazy", "fields": [["later", {
        "t": "object", "cls": "NoneType", "repr": None, "error": "AttributeError: 'Lazy' object has no attribute 'later'",
    }]]})


def padding_leaving(remaining: int) -> list[str]:
    """Strings that, as the first field of a Padded, leave exactly `remaining` of the budget."""
    left = BUDGET - 2 * (NODE_COST + CONTAINER_COST)  # the Padded and its list
    string_cost = NODE_COST + 2  # the node and the quotes, plus one per character
    full = 1000 - string_cost  # each of these strings costs 1000
    count, rest = divmod(left - remaining, 1000)
    return ["a" * full] * count + ["b" * (rest - string_cost)]


@pytest.mark.parametrize("remaining, fields", [(0, ["pad"]), (1, ["pad", "last"])])
def test_a_dataclass_stops_adding_fields_when_the_budget_is_spent(remaining, fields):
    pad = padding_leaving(remaining)
    value = encode(Padded(pad))
    assert [name for name, _ in value["fields"]] == fields
    assert value["fields"][0][1] == {"t": "list", "items": pad}


def test_the_budget_counts_each_dataclass_in_a_list():
    # Each item costs its node and container, its field's node and the string with its quotes: 666.
    items = [Node("x" * 600)] * 100
    per_item = 2 * NODE_COST + CONTAINER_COST + 602
    shown = -(-(BUDGET - NODE_COST - CONTAINER_COST) // per_item)
    value = encode(items)
    assert (len(value["items"]), value["len"]) == (shown, 100) == (76, 100)


# ---------------------------------------------------------------- containers and objects


def assert_truncated_below_six_lists(innermost, cls: str, repr_text: str) -> None:
    value, expected = innermost, {"t": "truncated", "cls": cls, "repr": repr_text}
    for _ in range(6):
        value, expected = [value], {"t": "list", "items": [expected]}
    assert_exact(encode(value), expected)


def test_a_list_nested_deeper_than_six_shows_a_short_repr_of_the_rest():
    assert_truncated_below_six_lists([1, [2]], "list", "[1, [2]]")


class Shown:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def test_an_object_is_its_class_and_repr():
    assert_exact(encode(Shown("a thing")), {"t": "object", "cls": "Shown", "repr": "a thing"})


def test_a_repr_of_exactly_the_limit_is_kept_whole_and_a_longer_one_ends_in_dots():
    assert encode(Shown("r" * MAX_STRING))["repr"] == "r" * MAX_STRING
    assert encode(Shown("r" * (MAX_STRING + 1)))["repr"] == "r" * (MAX_STRING - 3) + "..."


class Outer:
    class Inner:
        def __repr__(self) -> str:
            return "inner"


def test_a_nested_class_is_named_by_its_qualified_name():
    assert_exact(encode(Outer.Inner()), {"t": "object", "cls": "Outer.Inner", "repr": "inner"})


class QualnameHidden(type):
    def __getattribute__(cls, name):
        if name == "__qualname__":
            raise AttributeError(name)
        return super().__getattribute__(name)


class QualnameNotText(type):
    def __getattribute__(cls, name):
        return 5 if name == "__qualname__" else super().__getattribute__(name)


@pytest.mark.parametrize("metaclass", [QualnameHidden, QualnameNotText])
def test_a_class_without_a_usable_qualified_name_is_named_by_its_name(metaclass):
    proxy = metaclass("Proxy", (Shown,), {})("a proxy")
    assert_exact(encode(proxy), {"t": "object", "cls": "Proxy", "repr": "a proxy"})


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message either")


class ReprRaisesUnprintable:
    def __repr__(self) -> str:
        raise UnprintableError


def test_an_error_without_a_message_is_named_by_its_class():
    assert_exact(encode(ReprRaisesUnprintable()), {
        "t": "object", "cls": "ReprRaisesUnprintable", "repr": None, "error": "UnprintableError",
    })


# ---------------------------------------------------------------- numpy


def test_numpy_strings_and_bytes_are_python_strings_and_bytes():
    assert_exact(encode(np.str_("hi")), "hi")
    assert_exact(encode(np.bytes_(b"hi")), {"t": "bytes", "v": "b'hi'", "len": 2})


def test_other_numpy_scalars_are_objects():
    date = np.datetime64("2024-01-01")
    assert_exact(encode(date), {"t": "object", "cls": "datetime64", "repr": repr(date)})


def test_a_long_double_is_the_nearest_double():
    # Exactly halfway between two doubles: its printed digits would round the other way.
    halfway = np.longdouble(1) + np.longdouble(11) * np.longdouble(2.0) ** -53
    assert_exact(encode(halfway), {"t": "float", "v": 1.0000000000000013})


def test_finfo_and_iinfo_name_their_dtype():
    assert_exact(encode(np.finfo(np.float32)), {
        "t": "finfo", "dtype": "float32", "bits": 32, "max": 3.4028234663852886e38, "min": -3.4028234663852886e38,
        "eps": 1.1920928955078125e-07, "tiny": 1.1754943508222875e-38, "resolution": 9.999999974752427e-07,
    })
    assert_exact(encode(np.iinfo(np.int8)), {"t": "iinfo", "dtype": "int8", "bits": 8, "max": 127, "min": -128})


def test_an_array_of_strings_is_an_object():
    strings = np.array(["a", "b"])
    assert_exact(encode(strings), {"t": "object", "cls": "ndarray", "repr": "array(['a', 'b'], dtype='<U1')"})


def test_small_arrays_exactly():
    assert_exact(encode(np.array([1, 2, 3], dtype=np.int16)), {**array_layout("int16", [3], [1], 6), "data": [1, 2, 3]})
    # float16 is written with float32's shortest digits; long doubles as doubles.
    assert_exact(encode(np.array([0.1], dtype=np.float16)), {**array_layout("float16", [1], [1], 2), "data": [0.099975586]})
    third = np.array([1 / 3], dtype=np.longdouble)
    assert_exact(encode(third), {**array_layout(str(third.dtype), [1], [1], third.nbytes), "data": [0.3333333333333333]})
    complex_pairs = {**array_layout("complex128", [2], [1], 32), "data": [[1.0, 2.0], [3.0, -4.0]]}
    assert_exact(encode(np.array([1 + 2j, 3 - 4j])), complex_pairs)


def test_strides_that_are_not_whole_elements_stay_in_bytes():
    packed = np.zeros(3, dtype=[("tag", "i1"), ("count", "i4")])  # 5 bytes a record
    counts = {**array_layout("int32", [3], [5], 12, contiguous=False), "data": [0, 0, 0]}
    assert_exact(encode(packed["count"]), counts)


def test_a_large_array_has_a_preview_and_statistics():
    expected = {**array_layout("int64", [1000], [1], 8000), "preview": list(range(PREVIEW)), "min": 0, "max": 999, "mean": 499.5}
    assert_exact(encode(np.arange(1000)), expected)


@pytest.mark.parametrize("module", [np, torch], ids=["numpy", "torch"])
def test_a_large_complex_array_previews_its_first_elements_as_pairs(module):
    value = encode(module.arange(1000) * (1 + 2j))
    assert_exact(value["preview"], [[float(k), 2.0 * k] for k in range(PREVIEW)])
    assert "mean" not in value


def test_the_mean_of_infinities_is_nan_without_a_warning():
    spread = np.zeros(1000)
    spread[:2] = [np.inf, -np.inf]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = encode(spread)
    assert (value["min"], value["max"], value["mean"]) == ("-inf", "inf", "nan")
    assert caught == []


def test_the_budget_counts_each_large_array_by_its_preview():
    per_array = NODE_COST + ELEMENT_COST * PREVIEW
    shown = -(-(BUDGET - NODE_COST - CONTAINER_COST) // per_array)
    value = encode([np.zeros(1000)] * 100)
    assert (len(value["items"]), value["len"]) == (shown, 100) == (39, 100)


# ---------------------------------------------------------------- numbers, sets and dicts


def test_integers_past_javascripts_exact_range_are_tagged():
    assert_exact(encode(-(2**53)), {"t": "int", "v": "-9007199254740992"})
    assert_exact(encode(-(2**53) + 1), -(2**53) + 1)
    assert_exact(encode(2**4000), {"t": "object", "cls": "int", "repr": "<int of 4001 bits, about 1205 decimal digits>"})


def test_the_budget_counts_the_digits_of_each_big_integer():
    per_int = NODE_COST + 901 + CONTAINER_COST  # 10**900 has 901 digits
    shown = -(-(BUDGET - NODE_COST - CONTAINER_COST) // per_int)
    value = encode([10**900] * 100)
    assert (len(value["items"]), value["len"]) == (shown, 100) == (53, 100)


def test_sets_in_sorted_order_up_to_ten_thousand_items_then_in_iteration_order():
    negatives = {-k for k in range(10_000)}
    assert_exact(encode(negatives), {"t": "set", "items": sorted(negatives)[:100], "len": 10_000})
    negatives.add(-10_000)
    assert_exact(encode(negatives), {"t": "set", "items": list(negatives)[:100], "len": 10_001})
    assert_exact(encode({10, 9, -1}), {"t": "set", "items": [-1, 9, 10]})


class Unprintable(Shown):
    """Shown by its text, and without a repr when it has none."""

    def __repr__(self) -> str:
        if self.text is None:
            raise RuntimeError("unprintable")
        return self.text


def test_a_set_of_things_that_do_not_compare_is_ordered_by_type_name_then_repr():
    unprintable = {"t": "object", "cls": "Unprintable", "repr": None, "error": "RuntimeError: unprintable"}
    assert_exact(encode({10, 9, "x", (2,)}), {"t": "set", "items": [10, 9, "x", {"t": "tuple", "items": [2]}]})
    pair = {Unprintable(None), Unprintable("B")}  # without a repr: first among its kind
    assert_exact(encode(pair), {"t": "set", "items": [unprintable, {"t": "object", "cls": "Unprintable", "repr": "B"}]})


def test_a_frozenset_too_deep_is_shown_by_its_repr():
    assert_truncated_below_six_lists(frozenset({1}), "frozenset", "frozenset({1})")


def test_a_dict_shows_all_its_items_without_a_length():
    assert_exact(encode({"a": 1}), {"t": "dict", "items": [["a", 1]]})


def test_dict_keys_and_values_nest_like_everything_else():
    deep_key = {((1,),): 2}  # at depth 4: its key's inner tuple is the seventh level
    for _ in range(4):
        deep_key = {"k": deep_key}
    expected = {"t": "dict", "items": [[{"t": "tuple", "items": [{"t": "truncated", "cls": "tuple", "repr": "(1,)"}]}, 2]]}
    for _ in range(4):
        expected = {"t": "dict", "items": [["k", expected]]}
    assert_exact(encode(deep_key), expected)
    deep_value: object = {"k": 1}
    for _ in range(6):
        deep_value = {"k": deep_value}
    expected = {"t": "truncated", "cls": "dict", "repr": "{'k': 1}"}
    for _ in range(6):
        expected = {"t": "dict", "items": [["k", expected]]}
    assert_exact(encode(deep_value), expected)


def test_the_same_dict_twice_is_shown_twice():
    shared = {"a": 1}
    shown = {"t": "dict", "items": [["a", 1]]}
    assert_exact(encode([shared, shared]), {"t": "list", "items": [shown, shown]})


@pytest.mark.parametrize("remaining, shown", [(0, 1), (1, 2)])
def test_lists_and_dicts_stop_adding_items_when_the_budget_is_spent(remaining, shown):
    # A list or dict inside a list, like a Padded's field: the same costs, the same padding.
    listed = encode([padding_leaving(remaining), 1])
    assert (len(listed["items"]), listed.get("len")) == (shown, 2 if shown < 2 else None)
    keyed = encode({"pad": padding_leaving(remaining + NODE_COST + 5), "last": 1})  # its key "pad" costs too
    assert (len(keyed["items"]), keyed.get("len")) == (shown, 2 if shown < 2 else None)


def test_the_budget_counts_each_dict_in_a_list():
    per_item = 2 * NODE_COST + CONTAINER_COST + (NODE_COST + 3) + 602  # node, container, key "k", value
    shown = -(-(BUDGET - NODE_COST - CONTAINER_COST) // per_item)
    value = encode([{"k": "x" * 600}] * 100)
    assert len(value["items"]) == shown


# ---------------------------------------------------------------- decoding


@dataclasses.dataclass(frozen=True)
class Key:
    x: int


def test_decode_gives_numbers_back_with_their_type():
    large = ValueEncoder().encode(np.arange(1000))
    assert [type(decode(large)[key]) for key in ("min", "max", "mean")] == [int, int, float]
    spread = np.zeros(1000)
    spread[:2] = [np.inf, -np.inf]
    decoded = decode(encode(spread))
    assert (decoded["min"], decoded["max"]) == (-np.inf, np.inf) and np.isnan(decoded["mean"])
    assert decoded["preview"][:3] == [np.inf, -np.inf, 0.0]
    small = decode(encode(np.array([np.inf, 1.0])))
    assert small["data"] == [np.inf, 1.0]


def test_decode_of_strings_lists_and_dataclass_keys():
    assert decode({"t": "str", "v": "abc", "len": 5000}) == "abc"
    assert decode([1, "a", {"t": "float", "v": "inf"}]) == [1, "a", np.inf]
    assert decode(encode({Key(1): "k"})) == {(("x", 1),): "k"}
