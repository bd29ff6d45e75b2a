"""Inspected values as the environment panel shows them (viewer/js/values.js), one kind of
value (trace/README.md "Values") at a time."""

from __future__ import annotations

import pytest

from trace_builders import tensor

pytestmark = pytest.mark.browser

BIG = {"t": "tensor", "dtype": "float32", "shape": [100, 100], "stride": [1, 100], "device": "cuda:0",
       "requires_grad": True, "contiguous": False, "storage": 3, "offset": 0, "nbytes": 40000,
       "preview": [0.5] * 64, "min": -1.25, "max": 2.5, "mean": 0.0}

CASES = [
    (None, "None"),
    (True, "True"),
    (42, "42"),
    ("it's", "'it\\'s'"),
    ({"t": "float", "v": 2}, "2.0"),
    ({"t": "float", "v": 0.1}, "0.1"),
    ({"t": "float", "v": 1e20}, "1e20"),
    ({"t": "float", "v": 1800000000000.0}, "1.8e12"),
    ({"t": "float", "v": 0.3076923076923077}, "0.3077"),
    ({"t": "float", "v": 52219.61}, "52,219.6"),
    ({"t": "float", "v": -2.5e-07}, "-2.5e-7"),
    (1800000, "1,800,000"),
    ({"t": "float", "v": "nan"}, "nan"),
    ({"t": "int", "v": "123456789012345678901234567890"}, "123,456,789,012,345,678,901,234,567,890"),
    ({"t": "str", "v": "abc", "len": 5000}, "'abc' … (5,000 characters)"),
    ({"t": "bytes", "v": "b'\\x00hi'", "len": 3}, "b'\\x00hi' (3 bytes)"),
    ({"t": "bytes", "v": "b'a'", "len": 1}, "b'a' (1 byte)"),
    ({"t": "str", "v": "", "len": 1}, "'' … (1 character)"),
    ({"t": "list", "items": [1, 2, 3], "len": 1001}, "[1, 2, 3, … 998 more]"),
    ({"t": "tuple", "items": [1]}, "(1,)"),
    ({"t": "set", "items": [1, 2]}, "{1, 2}"),
    ({"t": "list", "items": [1, 2, 3], "len": 1000}, "[1, 2, 3, … 997 more]"),
    ({"t": "dict", "items": [["a", 1], ["b", {"t": "float", "v": 0.5}]]}, "{'a': 1, 'b': 0.5}"),
    ({"t": "dataclass", "cls": "Config", "fields": [["d_model", 512], ["name", "gpt"]]}, "Config(d_model=512, name='gpt')"),
    ({"t": "dtype", "v": "torch.bfloat16"}, "torch.bfloat16"),
    ({"t": "device", "v": "cuda:0"}, "cuda:0"),
    ({"t": "object", "cls": "Foo", "repr": "<Foo at 0x#1>"}, "<Foo at 0x#1>"),
    ({"t": "object", "cls": "Bad", "repr": None, "error": "boom"}, "<Bad> (repr failed: boom)"),
    ({"t": "truncated", "cls": "list", "repr": "[[...]]"}, "[[...]]"),
    ({"t": "finfo", "dtype": "float16", "bits": 16, "max": 65504, "min": -65504, "eps": 0.0009765625,
      "tiny": 6.103515625e-05, "resolution": 0.001}, "finfo(float16)bits16min-65,504.0max65,504.0eps0.0009766tiny6.104e-5resolution0.001"),
    ({"t": "iinfo", "dtype": "int8", "bits": 8, "max": 127, "min": -128}, "iinfo(int8)bits8min-128max127"),
    (tensor([], 3.5), "[] float32 cpu3.5"),
    (tensor([], 52219.61), "[] float32 cpu52,219.6"),
    (tensor([3], [1800000, 2, 3], dtype="int64"), "[3] int64 cpu01,800,0001223"),
    (tensor([2], [True, False], dtype="bool"), "[2] bool cpu0True1False"),
    (tensor([2, 2], [[0.3076923076923077, 1e12], [2.0, -0.5]]), "[2, 2] float32 cpu0.30771e122.-0.5"),
    (tensor([2, 1, 2], [[[1.0, 2.0]], [[3.0, 4.0]]]), "[2, 1, 2] float32 cpu[0, :, :]1.2.[1, :, :]3.4."),
    (tensor([2, 1, 2], [[[1, 2]], [[3, 4]]], dtype="int64"), "[2, 1, 2] int64 cpu[0, :, :]12[1, :, :]34"),
    # Complex elements come as [real, imag] pairs: one cell each, written as Python writes them.
    (tensor([2], [[1.0, 2.0], [3.0, -4.5]], dtype="complex64"), "[2] complex64 cpu0(1.+2.j)1(3.-4.5j)"),
    (tensor([], [0.5, -1.0], dtype="complex64"), "[] complex64 cpu(0.5-1.j)"),
    (tensor([1, 2], [[[1.0, 0.0], ["nan", "-inf"]]], dtype="complex128"), "[1, 2] complex128 cpu(1.+0.j)(nan-infj)"),
    ({**BIG, "dtype": "int64", "preview": [1] * 64, "min": -3, "max": 7, "mean": 2.5, "requires_grad": False,
      "contiguous": True}, "[100, 100] int64 cuda:010,000 elements" + "".join(f"{i}1" for i in range(64))
     + "first 64 of 10,000 elements (flattened) · min -3 · max 7 · mean 2.5"),
]


@pytest.fixture(scope="module")
def site(serve_module_site):
    return serve_module_site()


def test_each_kind_of_value_reads_like_python(page, site):
    page.goto(site.url + "index.html")
    texts = page.evaluate("""async (values) => {
        const { renderValue } = await import('./js/values.js');
        return values.map((value) => renderValue(value).textContent);
    }""", [value for value, _ in CASES])
    for (value, expected), text in zip(CASES, texts):
        assert text == expected, value


def test_big_tensor_opens_to_a_preview_with_statistics(page, site):
    page.goto(site.url + "index.html")
    page.evaluate("""async (value) => {
        const { renderValue } = await import('./js/values.js');
        document.body.append(Object.assign(renderValue(value), { id: 'probe' }));
    }""", BIG)
    probe = page.locator("#probe")
    head = "[100, 100] float32 cuda:0 requires_grad · non-contiguous, stride (1, 100)"
    assert probe.locator(".v-tensor-head").inner_text() == head
    assert not probe.locator(".v-matrix").is_visible()
    probe.locator("summary").click()
    assert probe.locator(".v-vector .v-el").count() == 64
    assert "first 64 of 10,000 elements (flattened) · min -1.25 · max 2.5 · mean 0." in probe.inner_text()


def test_one_dimensional_tensors_are_one_wrapping_row_with_index_labels(page, site):
    page.goto(site.url + "index.html")
    page.set_viewport_size({"width": 320, "height": 600})
    cells = page.evaluate("""async (value) => {
        const { renderValue } = await import('./js/values.js');
        const node = renderValue(value);
        node.style.width = '300px';
        document.body.append(node);
        return Array.from(node.querySelectorAll('.v-el'), (cell) => ({
            index: cell.querySelector('.v-index').textContent, text: cell.lastChild.textContent,
            top: Math.round(cell.getBoundingClientRect().top) }));
    }""", tensor([36], [float(i) / 3 for i in range(36)]))
    assert [cell["index"] for cell in cells] == [str(i) for i in range(36)]
    assert cells[1]["text"] == "0.3333" and cells[3]["text"] == "1."
    rows = sorted({cell["top"] for cell in cells})
    assert len(rows) > 1  # it wraps at the panel's width...
    assert page.locator(".v-tensor table").count() == 0  # ...as one row of cells, not a table that looks 2-d


def test_exact_values_on_hover_and_for_copying(page, site):
    page.goto(site.url + "index.html")
    result = page.evaluate("""async (values) => {
        const { renderValue, exactText } = await import('./js/values.js');
        return values.map((value) => {
            const node = renderValue(value);
            return { titles: Array.from(node.querySelectorAll('[title]'), (n) => n.title).concat(node.title ? [node.title] : []),
                     exact: exactText(value) };
        });
    }""", [{"t": "float", "v": 0.3076923076923077},
           {"t": "dict", "items": [["d", 1800000], ["p", {"t": "float", "v": 1e-07}]]},
           tensor([2], [0.1234567, 1e12]),
           tensor([2], [[0.1234567, -2.0], [0.0, 1.0]], dtype="complex64")])
    assert result[0] == {"titles": ["0.3076923076923077"], "exact": "0.3076923076923077"}
    assert result[1]["exact"] == "{'d': 1800000, 'p': 1e-07}"
    assert "1800000" in result[1]["titles"]
    assert result[2]["titles"] == ["0.1234567", "1000000000000.0"]
    assert result[2]["exact"] == "tensor([0.1234567, 1000000000000.0], shape=(2,), dtype=float32)"
    assert result[3]["titles"] == ["(0.1234567-2.0j)", "(0.0+1.0j)"]
    assert result[3]["exact"] == "tensor([(0.1234567-2.0j), (0.0+1.0j)], shape=(2,), dtype=complex64)"


def test_counts_of_one_are_singular(page, site):
    page.goto(site.url + "index.html")
    summaries = page.evaluate("""async (values) => {
        const { renderValue } = await import('./js/values.js');
        return values.map((value) => renderValue(value).querySelector('summary').textContent);
    }""", [{"t": "dict", "items": [["a", {"t": "list", "items": list(range(9))}]]},
           {"t": "list", "items": [{"t": "list", "items": [1, 2]}]},
           {"t": "dataclass", "cls": "Config", "fields": [["layers", {"t": "list", "items": list(range(9))}]]}])
    assert summaries == ["dict with 1 item", "list of 1 item […]", "Config with 1 field"]


def test_the_panel_speaks_the_chosen_language_with_its_plurals(page, site):
    page.goto(site.url + "index.html?lang=ru")
    texts = page.evaluate("""async (values) => {
        const { renderValue } = await import('./js/values.js');
        return values.map((value) => {
            const node = renderValue(value);
            const summary = node.querySelector('summary');
            return { summary: summary ? summary.textContent : null, text: node.textContent,
                     notes: Array.from(node.querySelectorAll('.v-note'), (n) => n.textContent) };
        });
    }""", [{"t": "list", "items": list(range(21))},
           {"t": "dict", "items": [["a", {"t": "list", "items": list(range(9))}]], "len": 3},
           {"t": "dataclass", "cls": "Config", "fields": [["layers", {"t": "list", "items": list(range(9))}]] * 5},
           {"t": "list", "items": [1, 2, 3], "len": 1001},
           {"t": "str", "v": "abc", "len": 5000},
           {"t": "bytes", "v": "b'\\x00hi'", "len": 3},
           BIG])
    assert texts[0]["summary"] == "list: 21 элемент […]"  # 21 takes the singular in Russian
    assert texts[1]["summary"] == "dict: 3 элемента" and "… ещё 2" in texts[1]["text"]
    assert texts[2]["summary"] == "Config: 5 полей"
    assert texts[3]["text"] == "[1, 2, 3, … ещё 998]"
    assert texts[4]["text"] == "'abc' … (5\u202f000 символов)"  # Russian groups digits with a narrow no-break space
    assert texts[5]["text"] == "b'\\x00hi' (3 байта)"
    assert texts[6]["summary"] == "10\u202f000 элементов"
    assert "не непрерывный, шаги (stride) (1, 100)" in texts[6]["text"]
    assert texts[6]["notes"][-1] == "первые 64; всего 10\u202f000 элементов (развёрнуто в одну строку) · min -1.25 · max 2.5 · mean 0."
