"""text / image / link / plot: the renderings a lecture puts on its lines, with a fake recorder."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import inspect
import json
import subprocess
import sys
import threading
from pathlib import Path

import jsonschema
import pytest

from cs336_lectures import Reference, image, link, plot, text
from cs336_lectures.runtime.render import assets as assets_module
from cs336_lectures.runtime.render.assets import AssetFetchError, AssetStore, cache_name, sniff_image_suffix
from cs336_lectures.runtime.lecture import primitives
from cs336_lectures.runtime.lecture.primitives import figure_svg, set_recorder

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "trace" / "schema.json").read_text())
RENDERING_VALIDATOR = jsonschema.Draft202012Validator(
    {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": "#/$defs/rendering"}
)
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
UNREACHABLE = "http://127.0.0.1:9/figure.png"  # the discard port: refused at once, no real network


class FakeRecorder:
    def __init__(self, root: Path):
        self.assets = AssetStore(root / "trace" / "assets", root / "cache")
        self.renderings: list[dict] = []
        self.files: list[str] = []

    def add_rendering(self, rendering: dict) -> None:
        RENDERING_VALIDATOR.validate(rendering)
        self.renderings.append(rendering)

    def file_index(self, path: str) -> int:
        if path not in self.files:
            self.files.append(path)
        return self.files.index(path)

    @property
    def last(self) -> dict:
        return self.renderings[-1]


@pytest.fixture
def recorder(tmp_path):
    fake = FakeRecorder(tmp_path)
    set_recorder(fake)
    yield fake
    set_recorder(None)


# ---------------------------------------------------------------- without a recorder


def test_without_a_recorder_primitives_do_nothing_but_still_check_arguments():
    assert primitives._recorder is None
    assert text("# hi") is None
    assert image("no/such/file.png") is None
    assert link("https://example.org") is None
    assert link(test_without_a_recorder_primitives_do_nothing_but_still_check_arguments) is None
    with pytest.raises(TypeError):
        text(42)
    with pytest.raises(ValueError):
        text("x", style={"color": "red; background: url(x)"})
    with pytest.raises(TypeError):
        link(42)
    with pytest.raises(ValueError, match="cannot find the Python source"):
        link(len)  # as it fails under the tracer


def test_importing_the_package_stays_light():
    code = "import sys, cs336_lectures; print(sorted(m for m in ('torch', 'matplotlib', 'numpy') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------- text


def test_text_renders_markdown_with_headings(recorder):
    text("# Tokenization\nStrings become $n$ integers. <b>not bold</b>")
    rendering = recorder.last
    assert rendering["type"] == "markdown" and rendering["headings"] == [[1, "Tokenization", "tokenization"]]
    assert "<math" in rendering["html"] and "&lt;b&gt;" in rendering["html"]
    assert "verbatim" not in rendering and "style" not in rendering
    assert rendering["source"] == "# Tokenization\nStrings become $n$ integers. <b>not bold</b>"  # math kept for notebooks


def test_heading_anchors_are_unique_within_a_trace(recorder):
    text("# Summary")
    text("# Summary")
    assert [r["headings"][0][2] for r in recorder.renderings] == ["summary", "summary-1"]


def test_text_verbatim_and_style(recorder):
    text("x <- *1*", verbatim=True, style={"font-size": "20px", "color": "#333", "--accent": "teal"})
    assert recorder.last == {
        "type": "markdown",
        "html": '<pre class="verbatim">x &lt;- *1*</pre>',
        "headings": [],
        "verbatim": True,
        "source": "x <- *1*",
        "style": {"font-size": "20px", "color": "#333", "--accent": "teal"},
    }


@pytest.mark.parametrize(
    "style",
    [{"color": "red;"}, {"color": "}"}, {"background": "url(https://x)"}, {"color": "/* */"}, {"bad name": "x"},
     {"width": "<b>"}],
)
def test_text_style_refuses_unsafe_css(recorder, style):
    with pytest.raises(ValueError):
        text("x", style=style)
    assert recorder.renderings == []


def test_text_style_must_be_a_dict_of_strings(recorder):
    with pytest.raises(TypeError):
        text("x", style="color: red")
    with pytest.raises(TypeError):
        text("x", style={"font-size": 20})


# ---------------------------------------------------------------- image


def test_small_local_image_is_inlined(recorder, tmp_path):
    path = tmp_path / "dot.png"
    path.write_bytes(PNG_1x1)
    image(str(path), width=120)
    assert recorder.last == {
        "type": "image", "src": "data:image/png;base64," + base64.b64encode(PNG_1x1).decode(), "alt": "dot.png", "width": 120,
    }


def test_large_local_image_is_stored_once_by_content_hash(recorder, tmp_path):
    path = tmp_path / "big.png"
    data = PNG_1x1 + bytes(20_000)
    path.write_bytes(data)
    image(path, width="50%")
    image(path)
    first, second = recorder.renderings
    assert first["src"] == second["src"] and first["src"].startswith("assets/") and first["src"].endswith(".png")
    assert first["width"] == "50%"
    stored = list((tmp_path / "trace" / "assets").iterdir())
    assert len(stored) == 1 and stored[0].read_bytes() == data


def test_missing_local_image_becomes_a_placeholder(recorder):
    image("images/does-not-exist.png")
    assert recorder.last["src"] is None and recorder.last["alt"] == "does-not-exist.png"
    assert "image not found: images/does-not-exist.png" in recorder.last["error"]


def test_unreachable_url_becomes_a_placeholder(recorder):
    image(UNREACHABLE, width=300)
    rendering = recorder.last
    assert rendering["src"] is None and rendering["width"] == 300 and rendering["alt"] == "figure.png"
    assert UNREACHABLE in rendering["error"]


def test_fetched_images_come_from_the_cache(recorder, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / cache_name(UNREACHABLE)).write_bytes(PNG_1x1)
    image(UNREACHABLE)
    assert recorder.last["src"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("name", ["notes.txt", "photo.png", "figure.svg"])
def test_a_file_that_is_not_an_image_becomes_a_placeholder(recorder, tmp_path, name):
    path = tmp_path / name
    path.write_text("hello")
    image(path)
    assert recorder.last["src"] is None and "not an image" in recorder.last["error"]


def test_an_svg_with_a_long_preamble_is_still_an_image(recorder, tmp_path):
    path = tmp_path / "figure.svg"
    path.write_text(f'<?xml version="1.0"?>\n<!-- {"c" * 2000} -->\n<svg xmlns="http://www.w3.org/2000/svg"/>')
    image(path)
    assert recorder.last["src"].startswith("data:image/svg+xml;base64,")


@pytest.mark.parametrize(
    "width, error",
    [(True, TypeError), (-5, ValueError), (float("inf"), ValueError), ("wide", ValueError), ([1], TypeError)],
)
def test_image_width_is_checked(recorder, width, error):
    with pytest.raises(error):
        image("x.png", width=width)


def test_image_needs_a_path_or_url(recorder):
    with pytest.raises(TypeError):
        image(None)
    with pytest.raises(TypeError):
        image(b"x.png")


# ---------------------------------------------------------------- link

BPE = Reference(
    "Neural Machine Translation of Rare Words with Subword Units",
    "https://arxiv.org/abs/1508.07909",
    authors=("Rico Sennrich", "Barry Haddow", "Alexandra Birch"),
    date="2015-08-31",
)


def test_link_to_a_reference(recorder):
    link(BPE)
    assert recorder.last == {
        "type": "link",
        "title": BPE.title,
        "url": BPE.url,
        "authors": ["Rico Sennrich", "Barry Haddow", "Alexandra Birch"],
        "date": "2015-08-31",
    }
    link(BPE, title="BPE for NMT")
    assert recorder.last["title"] == "BPE for NMT" and recorder.last["url"] == BPE.url


def test_link_to_a_bare_url_and_keyword_form(recorder):
    link("https://github.com/openai/tiktoken")
    assert recorder.last == {"type": "link", "title": "https://github.com/openai/tiktoken", "url": "https://github.com/openai/tiktoken"}
    link(title="GPT-2", url="https://openai.com/research/better-language-models", organization="OpenAI",
         authors="Alec Radford", description="Language models are unsupervised multitask learners")
    assert recorder.last == {
        "type": "link", "title": "GPT-2", "url": "https://openai.com/research/better-language-models",
        "authors": ["Alec Radford"], "organization": "OpenAI",
        "description": "Language models are unsupervised multitask learners",
    }


def decorator(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)

    return wrapper


def plain_function():
    return 1


@decorator
def decorated_function():
    return 2


class Tokenizer:
    def encode(self, text):
        return list(text)


def test_link_to_code_is_an_internal_link(recorder):
    link(plain_function)
    assert recorder.last == {"type": "link", "title": "plain_function", "file": 0, "line": plain_function.__code__.co_firstlineno}
    assert Path(recorder.files[0]) == Path(__file__)
    link(decorated_function)
    assert recorder.last["title"] == "decorated_function"
    assert recorder.last["line"] == inspect.getsourcelines(decorated_function.__wrapped__)[1]
    link(Tokenizer)
    assert recorder.last == {"type": "link", "title": "Tokenizer", "file": 0, "line": inspect.getsourcelines(Tokenizer)[1]}
    link(Tokenizer().encode, title="encode")
    assert recorder.last["title"] == "encode" and recorder.last["line"] == Tokenizer.encode.__code__.co_firstlineno
    link(functools.partial(plain_function))
    assert recorder.last["line"] == plain_function.__code__.co_firstlineno
    assert recorder.files == [recorder.files[0]]  # one file, added once
    link(assets_module)
    assert recorder.last == {"type": "link", "title": "cs336_lectures.runtime.render.assets", "file": 1, "line": 1}
    assert Path(recorder.files[1]) == Path(assets_module.__file__)


def test_link_to_a_class_of_a_lecture_run_from_a_file(recorder, tmp_path):
    lecture = tmp_path / "lecture.py"
    lecture.write_text("import math\n\n\nclass Counter:\n    def add(self):\n        return 1\n")
    namespace = {"__name__": "lecture_not_in_sys_modules"}
    exec(compile(lecture.read_text(), str(lecture), "exec"), namespace)
    link(namespace["Counter"])
    assert recorder.last == {"type": "link", "title": "Counter", "file": 0, "line": 4}
    assert recorder.files == [str(lecture)]


@pytest.mark.parametrize(
    "args, kwargs, error",
    [
        ((), {}, TypeError),
        ((42,), {}, TypeError),
        (("not a url",), {}, ValueError),
        (("javascript:alert(1)",), {}, ValueError),
        (("https://a.org",), {"url": "https://b.org"}, ValueError),
        ((), {"url": "https://a.org", "authors": [1]}, TypeError),
        ((), {"url": "https://a.org", "date": 2024}, TypeError),
        ((plain_function,), {"url": "https://a.org"}, ValueError),
        ((len,), {}, ValueError),
    ],
)
def test_bad_link_arguments_raise_clear_errors(recorder, args, kwargs, error):
    with pytest.raises(error):
        link(*args, **kwargs)


def test_reference_checks_its_fields():
    with pytest.raises(ValueError):
        Reference("A paper", "arxiv.org/abs/1")
    with pytest.raises(TypeError):
        Reference("A paper", "https://arxiv.org/abs/1", authors=[None])


# ---------------------------------------------------------------- plot


def make_figure():
    from matplotlib.figure import Figure

    figure = Figure(figsize=(3, 2))
    axes = figure.add_subplot()
    axes.plot([1, 2, 3], [1, 4, 9], label="squares")
    axes.set_title("Loss")
    axes.legend()
    return figure


def test_plot_stores_a_deterministic_svg(recorder, tmp_path):
    first = figure_svg(make_figure())
    assert first.lstrip().startswith(b"<?xml") and b"<svg" in first
    assert figure_svg(make_figure()) == first  # same figure drawn twice: same bytes, ids and all
    plot(make_figure())
    rendering = recorder.last
    assert rendering["type"] == "plot" and rendering["alt"] == "Loss"
    if rendering["src"].startswith("assets/"):
        assert (tmp_path / "trace" / rendering["src"]).read_bytes() == first
    else:
        assert rendering["src"] == "data:image/svg+xml;base64," + base64.b64encode(first).decode()


def test_a_figure_that_cannot_be_drawn_becomes_a_placeholder(recorder):
    figure = make_figure()
    figure.axes[0].set_title(r"$\frac{1}$")  # mathtext that matplotlib cannot parse
    plot(figure)
    assert recorder.last["type"] == "image" and recorder.last["src"] is None
    assert recorder.last["error"].startswith("cannot draw the plot: ValueError")


def test_plot_accepts_axes_and_refuses_other_things(recorder):
    plot(make_figure().axes[0])
    assert recorder.last["type"] == "plot"
    with pytest.raises(TypeError):
        plot([1, 2, 3])


# ---------------------------------------------------------------- the asset store


def test_asset_store_inlines_small_assets_with_their_mime_type(tmp_path):
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    assert store.add(b"<svg/>", "svg") == "data:image/svg+xml;base64," + base64.b64encode(b"<svg/>").decode()
    assert store.add(b"\xff\xd8\xff", ".JPEG").startswith("data:image/jpeg;base64,")
    assert store.add(b"?", "xyz").startswith("data:application/octet-stream;base64,")
    assert not (tmp_path / "assets").exists()


def test_asset_store_writes_large_assets_atomically_by_hash(tmp_path):
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    data = bytes(range(256)) * 64
    src = store.add(data, "png")
    assert src == f"assets/{hashlib.sha256(data).hexdigest()[:16]}.png"
    assert store.add(data, "png") == src
    assert [p.name for p in (tmp_path / "assets").iterdir()] == [src.removeprefix("assets/")]
    assert (tmp_path / src).read_bytes() == data


@pytest.mark.parametrize("suffix", ["", "../png", "p/ng", "a" * 20])
def test_asset_store_refuses_bad_suffixes(tmp_path, suffix):
    with pytest.raises(ValueError, match="bad asset suffix"):
        AssetStore(tmp_path, tmp_path).add(b"x", suffix)


def test_fetch_refuses_other_schemes_and_reports_failures(tmp_path):
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    with pytest.raises(AssetFetchError, match="http"):
        store.fetch("file:///etc/passwd")
    with pytest.raises(AssetFetchError, match="could not fetch http://127.0.0.1:9/"):
        store.fetch(UNREACHABLE)
    assert not (tmp_path / "cache").exists()


@contextlib.contextmanager
def png_server(missing: str = "/missing.png"):
    """A local HTTP server answering PNG_1x1 for every path but `missing` (404); yields its base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == missing:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(PNG_1x1)))
            self.end_headers()
            self.wfile.write(PNG_1x1)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_downloads_once_into_the_cache(tmp_path):
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    with png_server() as base:
        url = f"{base}/images/dot.png"
        assert store.fetch(url) == PNG_1x1
    assert store.fetch(url) == PNG_1x1  # the server is gone: this came from the cache
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [cache_name(url)]
    assert cache_name(url).endswith(".png")


@pytest.mark.parametrize(
    "data, suffix",
    [(PNG_1x1, "png"), (b"\xff\xd8\xff\xe0", "jpg"), (b"GIF89a...", "gif"), (b"RIFF\0\0\0\0WEBPVP8 ", "webp"),
     (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', "svg"), (b"<svg/>", "svg"),
     (b"<html></html>", None), (b"", None)],
)
def test_image_formats_are_sniffed(data, suffix):
    assert sniff_image_suffix(data) == suffix


def test_a_hanging_name_lookup_gives_up_and_the_host_is_then_skipped(tmp_path, monkeypatch):
    import socket

    release, lookups = threading.Event(), []

    def hanging_lookup(*args, **kwargs):  # a resolver that never answers, as without a network
        lookups.append(args[0])
        release.wait()
        raise socket.gaierror("no network")

    monkeypatch.setattr(assets_module, "FETCH_DEADLINE_S", 0.2)
    monkeypatch.setattr(socket, "getaddrinfo", hanging_lookup)
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    try:
        with pytest.raises(AssetFetchError, match="no answer within 0.2 s"):
            store.fetch("http://images.invalid/one.png")
        with pytest.raises(AssetFetchError, match="images.invalid was unreachable earlier"):
            store.fetch("http://images.invalid/two.png")
    finally:
        release.set()
    assert len(lookups) == 1  # the second image did not wait again


def test_an_http_error_does_not_mark_the_host_unreachable(tmp_path):
    store = AssetStore(tmp_path / "assets", tmp_path / "cache")
    with png_server(missing="/missing.png") as base:
        with pytest.raises(AssetFetchError, match="404"):
            store.fetch(f"{base}/missing.png")
        assert store.fetch(f"{base}/present.png") == PNG_1x1
