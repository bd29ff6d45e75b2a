"""Lectures 1 and 2 (and the framework tour) trace cleanly and compute what they teach.

The lectures are traced once per session with the real CLI, in a subprocess, exactly as
`make run` does; every test below reads the written traces through `load_trace`.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cs336_lectures import load_trace

ROOT = Path(__file__).resolve().parents[2]
LECTURES = ("lecture_01", "lecture_02", "example_basics")


@pytest.fixture(scope="module")
def traced(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """Trace every lecture with `python -m cs336_lectures trace`; (the process, the output folder)."""
    out = tmp_path_factory.mktemp("lecture-traces")
    files = [f"lectures/{name}.py" for name in LECTURES]
    # conftest.py puts TIKTOKEN_CACHE_DIR (the GPT-2 files in tests/fixtures) into os.environ;
    # the subprocess inherits it, so GPT-2's tokenizer loads offline.
    process = subprocess.run(
        [sys.executable, "-m", "cs336_lectures", "trace", *files, "-o", str(out), "--quiet"],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=600,
    )
    return process, out


@pytest.fixture(scope="module")
def lecture_01(traced):
    return load_trace(traced[1] / "lecture_01.json")


@pytest.fixture(scope="module")
def lecture_02(traced):
    return load_trace(traced[1] / "lecture_02.json")


def last(trace, name: str):
    """The last recorded value of an inspected name (failing clearly when it was never recorded)."""
    values = trace.values_of(name)
    assert values, f"{name} was never inspected in {trace.header['title']}"
    return values[-1]


def tensor_data(value) -> list:
    """The contents of a decoded tensor value."""
    assert isinstance(value, dict) and "data" in value, f"not a small decoded tensor: {value!r}"
    return value["data"]


# ---------------------------------------------------------------- every lecture


def test_cli_succeeds(traced):
    process, _ = traced
    assert process.returncode == 0, process.stderr


@pytest.mark.parametrize("name", LECTURES)
def test_trace_is_complete_and_valid(traced, validate_trace, name):
    path = traced[1] / f"{name}.json"
    raw = validate_trace(path)
    header = raw["header"]
    assert header["status"] == "ok", header.get("message")
    assert header["entry"] == "main"
    assert header["num_steps"] == len(raw["steps"]) > 0
    assert not any("x" in step[2] for step in raw["steps"] if len(step) > 2)


@pytest.mark.parametrize("name", LECTURES)
def test_lecture_has_headings_links_and_plots(traced, name):
    raw = json.loads((traced[1] / f"{name}.json").read_text())
    renderings = [r for step in raw["steps"] if len(step) > 2 for r in step[2].get("r", [])]
    kinds = {rendering["type"] for rendering in renderings}
    assert {"markdown", "link", "plot"} <= kinds
    assert any(rendering.get("headings") for rendering in renderings)
    plots = [r for r in renderings if r["type"] == "plot"]
    for rendering in plots:
        src = rendering["src"]
        assert src.startswith("data:") or (traced[1] / src).is_file()
    # Internal links point at real lines of files included in the trace.
    for rendering in renderings:
        if rendering["type"] == "link" and "file" in rendering:
            lines = raw["files"][rendering["file"]]["source"].splitlines()
            assert 1 <= rendering["line"] <= len(lines)


def test_lectures_link_into_the_package(traced):
    for name in ("lecture_01", "lecture_02"):
        raw = json.loads((traced[1] / f"{name}.json").read_text())
        paths = {file["path"] for file in raw["files"]}
        assert any("cs336_lectures/" in path for path in paths), paths


@pytest.mark.parametrize("name", ["lecture_01", "lecture_02"])
def test_every_content_function_used_is_linked(traced, name):
    """Each function or class a lecture imports from the package has an internal link to its source."""
    tree = ast.parse((ROOT / "lectures" / f"{name}.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("cs336_lectures.")
                for alias in node.names if not alias.name.isupper() and alias.name != "timing"}
    raw = json.loads((traced[1] / f"{name}.json").read_text())
    linked = {r["title"] for step in raw["steps"] if len(step) > 2 for r in step[2].get("r", [])
              if r["type"] == "link" and "file" in r}
    assert imported and not imported - linked, f"not linked: {sorted(imported - linked)}"


EXERCISES = [
    ("lecture_01", "exercise_bpe_on_russian", "mama_merge", 8),
    ("lecture_01", "exercise_compression_russian_vs_english", "russian_num_tokens", 298),  # GPT-2's count
    ("lecture_02", "exercise_napkin_math_rtx4080", "hours", pytest.approx(3.34, abs=0.01)),
    ("lecture_02", "exercise_matmul_mfu", "matrices_gb", None),  # depends on the device: checked below
]


@pytest.mark.parametrize("lecture, section, name, expected", EXERCISES)
def test_each_exercise_traces_as_a_section(tmp_path, lecture, section, name, expected):
    process = subprocess.run(
        [sys.executable, "-m", "cs336_lectures", "trace", f"lectures/{lecture}.py",
         "--section", section, "-o", str(tmp_path), "--quiet"],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stderr
    trace = load_trace(tmp_path / f"{lecture}.{section}.json")
    assert trace.header["entry"] == section and trace.header["status"] == "ok"
    value = last(trace, name)
    if expected is None:  # four bytes for each element of the three float32 matrices
        B, D, K = last(trace, "B"), last(trace, "D"), last(trace, "K")
        expected = pytest.approx((B * D + D * K + B * K) * 4 / 1e9)
    assert value == expected


def test_external_references_have_titles(traced):
    raw = json.loads((traced[1] / "lecture_01.json").read_text())
    links = [r for step in raw["steps"] if len(step) > 2 for r in step[2].get("r", [])
             if r["type"] == "link" and "url" in r]
    assert len(links) > 50
    assert all(link["title"] and link["url"].startswith(("http://", "https://")) for link in links)
    titles = {link["title"] for link in links}
    assert "Neural Machine Translation of Rare Words with Subword Units" in titles
    assert "Attention Is All You Need" in titles
    assert "Making Deep Learning Go Brrrr From First Principles" in titles
    assert any("stephenroller" in link["url"] for link in links)
    # the links issue 11 asked for: schedules, Gage 1994, the assignments, the cluster guide
    assert {"A New Algorithm for Data Compression", "SGDR: Stochastic Gradient Descent with Warm Restarts",
            "Assignment 1: basics", "CS336: how to use the course's compute cluster"} <= titles


def test_section_traces_alone(tmp_path):
    process = subprocess.run(
        [sys.executable, "-m", "cs336_lectures", "trace", "lectures/lecture_01.py",
         "--section", "bpe_training", "-o", str(tmp_path), "--quiet"],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stderr
    trace = load_trace(tmp_path / "lecture_01.bpe_training.json")
    assert trace.header["entry"] == "bpe_training"
    assert last(trace, "merges") == {(116, 104): 256, (256, 101): 257, (257, 32): 258}


# ---------------------------------------------------------------- lecture 1


def test_lecture_01_course_numbers(lecture_01):
    assert last(lecture_01, "chinchilla_tokens") == pytest.approx(28e9)
    assert last(lecture_01, "chinchilla_flops") == pytest.approx(2.352e20)
    # C = 6 N D with D = 20 N for every budget on the plot.
    budgets, params = last(lecture_01, "budgets"), last(lecture_01, "optimal_params")
    assert all(6 * n * 20 * n == pytest.approx(c) for c, n in zip(budgets, params))
    assert last(lecture_01, "yearly_gain") == pytest.approx(44 ** (1 / 7))
    shares = last(lecture_01, "attention_share")
    assert shares == sorted(shares, reverse=True)  # attention matters less as models grow
    assert shares[0] > 0.3 and shares[-1] < 0.03
    assert lecture_01.values_of("total") == [0, 1, 3, 6]


def test_lecture_01_character_and_byte_tokenizers(lecture_01):
    assert last(lecture_01, "character_indices") == [
        72, 101, 108, 108, 111, 44, 32, 127757, 33, 32, 1055, 1088, 1080, 1074, 1077, 1090, 33]
    assert last(lecture_01, "character_vocabulary_size") == 127758
    assert last(lecture_01, "character_compression_ratio") == pytest.approx(26 / 17)
    assert len(last(lecture_01, "byte_indices")) == 26
    assert last(lecture_01, "byte_compression_ratio") == 1.0
    assert last(lecture_01, "earth_bytes") == b"\xf0\x9f\x8c\x8d"


def test_lecture_01_word_segmentation(lecture_01):
    assert last(lecture_01, "simple_segments") == [
        "I", "'", "ll", " ", "say", " ", "supercalifragilisticexpialidocious", "!"]
    assert last(lecture_01, "gpt2_segments") == [
        "I", "'ll", " say", " supercalifragilisticexpialidocious", "!"]
    assert last(lecture_01, "word_compression_ratio") == pytest.approx(8.8)


def test_lecture_01_bpe_merges_step_by_step(lecture_01):
    assert lecture_01.values_of("pair") == [(116, 104), (256, 101), (257, 32)]
    assert lecture_01.values_of("new_token") == [b"th", b"the", b"the "]
    assert last(lecture_01, "indices") == [258, 99, 97, 116, 32, 105, 110, 32, 258, 104, 97, 116]
    assert last(lecture_01, "bpe_merges") == {(116, 104): 256, (256, 101): 257, (257, 32): 258}
    assert last(lecture_01, "bpe_indices") == [
        258, 113, 117, 105, 99, 107, 32, 98, 114, 111, 119, 110, 32, 102, 111, 120]
    assert last(lecture_01, "first_token") == b"the "


def test_lecture_01_full_tokenizer_keeps_special_tokens(lecture_01):
    tokens = last(lecture_01, "full_bpe_tokens")
    assert b"<|endoftext|>" in tokens
    assert b"".join(tokens) == "the cat<|endoftext|>the hat".encode()


def test_lecture_01_exercise_russian_bpe(lecture_01):
    assert last(lecture_01, "emoji_merge") == 7
    assert last(lecture_01, "mama_merge") == 8
    halves = last(lecture_01, "half_character_tokens")
    assert b"\xd0\xbc\xd1" in halves and b"\xf0\x9f" in halves


def test_lecture_01_gpt2(lecture_01, gpt2_cache):
    assert last(lecture_01, "gpt2_indices") == [
        15496, 11, 12520, 234, 235, 0, 12466, 253, 21169, 18849, 38857, 16843, 20375, 0]
    assert last(lecture_01, "gpt2_compression_ratio") == pytest.approx(26 / 14)
    assert last(lecture_01, "gpt2_tokens")[2:5] == [b" \xf0\x9f", b"\x8c", b"\x8d"]  # " 🌍" in 3
    assert last(lecture_01, "observed_tokens") == [b"hello", b" world", b"!", b" 123", b"45", b"678"]
    # The same lowercase word at the start and after a space: only the position differs.
    assert last(lecture_01, "position_ids") == [31373, 23748]
    assert last(lecture_01, "compression_ratios") == pytest.approx({
        "character": 26 / 17, "byte": 1.0, "word (GPT-2 regex)": 26 / 5, "BPE (GPT-2)": 26 / 14})
    assert last(lecture_01, "same_as_tiktoken") is True
    assert last(lecture_01, "our_gpt2_indices")[-1] == 50256  # <|endoftext|>


def test_lecture_01_exercise_russian_vs_english(lecture_01, gpt2_cache):
    russian = last(lecture_01, "russian_compression_ratio")
    english = last(lecture_01, "english_compression_ratio")
    assert english > 2 * russian
    assert last(lecture_01, "russian_num_tokens") > 3 * last(lecture_01, "english_num_tokens")
    assert last(lecture_01, "token_cost_ratio") == pytest.approx(
        last(lecture_01, "russian_num_tokens") / last(lecture_01, "english_num_tokens"))
    assert last(lecture_01, "russian_characters_per_token") < 1  # less than a letter per token
    assert last(lecture_01, "russian_bytes_per_character") > 1.5 > last(lecture_01, "english_bytes_per_character")


def test_lecture_01_without_gpt2_files_degrades(tmp_path):
    """With an empty tiktoken cache and no network the lecture says so instead of crashing."""
    # A proxy on a closed port makes any download attempt fail at once, network or not.
    dead_proxy = "http://127.0.0.1:9"
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "empty-cache"),
               HTTPS_PROXY=dead_proxy, https_proxy=dead_proxy, HTTP_PROXY=dead_proxy,
               http_proxy=dead_proxy, NO_PROXY="", no_proxy="")
    (tmp_path / "empty-cache").mkdir()
    process = subprocess.run(
        [sys.executable, "-m", "cs336_lectures", "trace", "lectures/lecture_01.py",
         "--section", "tokenization_examples", "-o", str(tmp_path), "--quiet"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stderr
    raw = json.loads((tmp_path / "lecture_01.tokenization_examples.json").read_text())
    html = " ".join(r.get("html", "") for step in raw["steps"] if len(step) > 2
                    for r in step[2].get("r", []))
    assert "could not be loaded" in html


# ---------------------------------------------------------------- lecture 2


def test_lecture_02_napkin_math(lecture_02):
    assert last(lecture_02, "total_flops") == pytest.approx(6.3e24)
    assert last(lecture_02, "days") == pytest.approx(144, abs=0.5)
    assert last(lecture_02, "napkin_days") == pytest.approx(last(lecture_02, "days"))
    assert last(lecture_02, "bytes_per_param") == 16
    assert last(lecture_02, "largest_num_parameters") == pytest.approx(40e9)


def test_lecture_02_memory_and_dtypes(lecture_02):
    assert last(lecture_02, "memory") == 128
    assert last(lecture_02, "gpt3_ffn_bytes") == 2304 * 1024 * 1024
    assert last(lecture_02, "float32_layout") == {"sign": 1, "exponent": 8, "mantissa": 23}
    assert last(lecture_02, "float16_layout") == {"sign": 1, "exponent": 5, "mantissa": 10}
    assert last(lecture_02, "bfloat16_layout") == {"sign": 1, "exponent": 8, "mantissa": 7}
    assert last(lecture_02, "fp16_value") == 0.0  # 1e-8 underflows in float16
    assert last(lecture_02, "bf16_value") == pytest.approx(1.0012e-8, rel=1e-3)  # not in bfloat16
    assert tensor_data(last(lecture_02, "fp16_tiny")) == [0.0]
    rows = {row["name"]: row for row in last(lecture_02, "rows")}
    assert rows["float16"]["largest"] == 65504
    assert rows["bfloat16"]["eps"] == pytest.approx(7.8125e-3)
    assert last(lecture_02, "e4m3_largest") == 448 and last(lecture_02, "e5m2_largest") == 57344


def test_lecture_02_tensor_mechanics(lecture_02):
    assert last(lecture_02, "strides") == (4, 1)
    assert last(lecture_02, "index") == 6
    assert last(lecture_02, "views_share_storage") == [True, True, True, True]
    assert tensor_data(last(lecture_02, "transposed_after_write"))[0][0] == 100
    assert last(lecture_02, "is_contiguous") is False
    assert "view size is not compatible" in last(lecture_02, "view_error")
    assert last(lecture_02, "copy_shares_storage") is False
    assert last(lecture_02, "transposed_strides") == (1, 3)
    assert last(lecture_02, "reshape_copied") is True
    assert last(lecture_02, "expected_memory_used") == 2 * 32 * 32 * 4
    assert tensor_data(last(lecture_02, "upper")) == [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    assert last(lecture_02, "batched_shape") == (4, 8, 16, 2)
    assert last(lecture_02, "final_shape") == (2, 3, 8)


def test_lecture_02_flops(lecture_02):
    B, D, K = last(lecture_02, "B"), last(lecture_02, "D"), last(lecture_02, "K")
    on_gpu = lecture_02.header["device"] != "cpu"
    assert (B, D, K) == ((16384, 32768, 8192) if on_gpu else (1024, 256, 64))
    assert last(lecture_02, "actual_num_flops") == 2 * B * D * K
    assert last(lecture_02, "num_forward_flops") == 2 * B * D * D + 2 * B * D * K
    assert last(lecture_02, "backward_to_forward") == 2.0
    assert last(lecture_02, "eight_h100_two_weeks") == pytest.approx(9.58e21, rel=1e-3)
    assert last(lecture_02, "gpt3_to_cluster") == pytest.approx(3.14e23 / 9.5751936e21)
    assert last(lecture_02, "actual_flop_per_sec") == pytest.approx(
        last(lecture_02, "actual_num_flops") / last(lecture_02, "actual_time"))
    assert last(lecture_02, "datasheet_tflop_per_sec") == {
        "A100": {"fp32": 19.5, "bf16": 312.0}, "H100 SXM": {"fp32": 67.0, "bf16": 989.5}}


def test_lecture_02_mfu_is_absent_rather_than_invented_on_cpu(lecture_02):
    if lecture_02.header["device"] != "cpu":
        pytest.skip(f"traced on {lecture_02.header['device']}: MFU is measured there")
    assert last(lecture_02, "mfu") is None
    assert last(lecture_02, "bf16_mfu") is None
    assert "no MFU" in last(lecture_02, "promised_note")


def test_lecture_02_gradient_and_initialization(lecture_02):
    assert tensor_data(last(lecture_02, "w_grad")) == [1.0, 2.0, 3.0]
    assert last(lecture_02, "unscaled_output_std") > 30
    assert 0.3 < last(lecture_02, "scaled_output_std") < 3
    assert last(lecture_02, "largest_weight_in_stds") <= 3.0 + 1e-5
    assert last(lecture_02, "param_sizes") == [
        ("layers.0.weight", 4096), ("layers.1.weight", 4096), ("final.weight", 64)]


def test_lecture_02_optimizers_and_step_accounting(lecture_02):
    assert last(lecture_02, "largest_change") == pytest.approx(0.01, rel=1e-3)
    assert last(lecture_02, "state_values_per_parameter") == {
        "SGD": 0, "Momentum": 1, "AdaGrad": 1, "RMSProp": 1, "Adam": 2, "AdamW": 2}
    assert last(lecture_02, "total_memory") == 496
    assert last(lecture_02, "adam_total_memory") == 4 * (36 + 16 + 36 + 2 * 36)
    assert last(lecture_02, "flops") == 432


def test_lecture_02_adagrad_state_by_hand(lecture_02):
    # w = 2.0, lr = 0.1, gradients 3 then 4: the state g2 remembers 9, then 25.
    assert lecture_02.values_of("grad") == [3.0, 4.0]
    assert lecture_02.values_of("g2") == [9.0, 25.0]
    assert lecture_02.values_of("weight") == pytest.approx([1.9, 1.82], abs=1e-6)


def test_lecture_02_training_checkpoint_and_mixed_precision(lecture_02):
    slow, fast = last(lecture_02, "slow_losses"), last(lecture_02, "fast_losses")
    assert len(slow) == len(fast) == 100
    assert slow[0] == fast[0]  # the same data and initialization; only lr differs
    assert last(lecture_02, "fast_final_loss") < last(lecture_02, "slow_final_loss") / 10
    # num_layers is honoured: a 2-layer model starts elsewhere, diverges at lr=0.01, trains at 0.001
    deep = last(lecture_02, "deep_losses")
    assert deep[0] != slow[0]
    assert last(lecture_02, "deep_diverged_at_step") is not None
    assert last(lecture_02, "deep_slow_final_loss") < 1e-2
    assert last(lecture_02, "resumed_iteration") == 5
    assert last(lecture_02, "resumed_exactly") is True
    assert last(lecture_02, "resumed_losses") == last(lecture_02, "uninterrupted_losses")
    assert last(lecture_02, "output_dtype") == "torch.bfloat16"
    assert last(lecture_02, "parameter_dtype") == "torch.float32"
    assert tensor_data(last(lecture_02, "inputs"))[0][1:] == tensor_data(last(lecture_02, "targets"))[0][:-1]


def test_lecture_02_exercise_matmul_sizes(lecture_02):
    B, D, K = last(lecture_02, "B"), last(lecture_02, "D"), last(lecture_02, "K")
    assert last(lecture_02, "matrices_gb") == pytest.approx((B * D + D * K + B * K) * 4 / 1e9)
    assert last(lecture_02, "gpu_matrices_gb") == pytest.approx(3.76, abs=0.01)  # "about 4 GB"
    results = last(lecture_02, "results")
    assert set(results) == {"torch.float32", "torch.bfloat16"}
    for result in results.values():  # what was measured, divided as the definition says
        assert result["TFLOP/s"] == pytest.approx(2 * B * D * K / result["seconds"] / 1e12)


def test_lecture_02_exercise_napkin_math(lecture_02):
    assert last(lecture_02, "seconds") == pytest.approx(12_000, rel=0.01)
    assert last(lecture_02, "hours") == pytest.approx(3.3, abs=0.05)


# ---------------------------------------------------------------- second pass: figures, solutions, outline


def plot_titles(trace) -> list[str]:
    return [r["alt"] for step in trace.steps for r in step.renderings if r["type"] == "plot"]


def headings(trace) -> list[tuple[int, str]]:
    return [(level, title) for step in trace.steps for r in step.renderings if r["type"] == "markdown"
            for level, title, _ in r["headings"]]


def test_lecture_01_figures(lecture_01):
    titles = plot_titles(lecture_01)
    assert "plot" not in titles, "every figure has a title"
    for expected in ("GPU memory levels", "Prefill works on many tokens", "Iso-FLOP curves",
                     "GPT-2 cuts the 26-byte example into 14 tokens", "BPE on 'the cat in the hat'"):
        assert any(title.startswith(expected) for title in titles), (expected, titles)
    # The iso-FLOP valleys move to larger models as the budget grows.
    valleys = last(lecture_01, "valley_params")
    assert valleys == sorted(valleys) and len(valleys) == len(last(lecture_01, "iso_flop_budgets"))
    assert last(lecture_01, "ridge_flops_per_byte") == pytest.approx(989.5 / 3.35)
    assert last(lecture_01, "flops_per_byte") == {"prefill": 1024, "decode": 1}


def test_lecture_02_figures(lecture_02):
    titles = plot_titles(lecture_02)
    assert "plot" not in titles, "every figure has a title"
    for expected in ("Where a tensor lives", "One storage, two views", "Batched matmul: (4, 8, 16, 32) @ (32, 2)",
                     "One training step costs 6 FLOPs", "Memory of one training step, by optimizer",
                     "The same run in float32 and in mixed precision", "Bits of float32"):
        assert any(title.startswith(expected) for title in titles), (expected, titles)
    assert last(lecture_02, "flops_per_point_and_parameter") == {"forward": 2.0, "backward": 4.0}
    memory = last(lecture_02, "memory_by_optimizer")
    assert {name: sum(parts.values()) for name, parts in memory.items()} == {"SGD": 352, "AdaGrad": 496, "Adam": 640}
    assert memory["Adam"] == {"parameters": 4 * 36, "gradients": 4 * 36, "optimizer state": 4 * 72, "activations": 4 * 16}
    assert last(lecture_02, "transposed_view_strides") == (1, 4)


SOLUTIONS = [
    ("lecture_01", "exercise_bpe_on_russian", "mama_merge"),
    ("lecture_01", "exercise_compression_russian_vs_english", "russian_num_tokens"),
    ("lecture_02", "exercise_napkin_math_rtx4080", "hours"),
    ("lecture_02", "exercise_matmul_mfu", "matrices_gb"),
]


@pytest.mark.parametrize("lecture, section, answer", SOLUTIONS)
def test_each_exercise_asks_before_its_solution(request, lecture, section, answer):
    trace = request.getfixturevalue(lecture)
    if section == "exercise_compression_russian_vs_english" and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        pytest.skip("GPT-2's tokenizer files are not available offline")
    blocks = [block for block in trace.solutions if block.steps and block.steps[0].function == section]
    assert len(blocks) == 1, f"{section} has no solution block"
    block = blocks[0]
    # The answer is computed and explained inside the block ...
    assert block.values_of(answer)
    assert any(r["type"] == "markdown" for r in block.renderings)
    # ... and the question is on the page before it.
    first = block.steps[0].index
    asked = [r for step in trace.steps[:first] if step.function == section for r in step.renderings
             if r["type"] == "markdown" and "?" in r["html"]]
    assert asked, f"{section} shows no question before its solution"
    source = next(file["source"] for file in trace.files if file["path"] == block.file).splitlines()
    assert source[block.first_line - 2].strip() == "with solution():"


def test_lecture_02_outline_has_four_parts(lecture_02):
    outline = headings(lecture_02)
    parts = [title for level, title in outline if level == 1]
    assert parts == ["Lecture 2: PyTorch and resource accounting", "Memory accounting", "Compute accounting",
                     "Models", "The training loop", "Exercises"]
    sections_per_part: dict[str, int] = {}
    part = None
    for level, title in outline:
        if level == 1:
            part = title
        else:
            assert level == 2, (level, title)
            sections_per_part[part] = sections_per_part.get(part, 0) + 1
    assert all(sections_per_part.get(part, 0) >= 2 for part in parts[1:5]), sections_per_part


def test_lecture_01_ends_with_next_time(lecture_01):
    assert headings(lecture_01)[-1] == (2, "Next time")
    exercises = [index for index, (_, title) in enumerate(headings(lecture_01)) if title.startswith("Exercise")]
    assert exercises and exercises[-1] == len(headings(lecture_01)) - 2


def test_lecture_02_accuracy_fixes(lecture_02):
    # Basic slicing shares storage; advanced indexing copies.
    assert last(lecture_02, "basic_row_shares_storage") is True
    assert last(lecture_02, "picked_shares_storage") is False
    assert last(lecture_02, "x_after_writing_the_copy") == 100
    # The causal mask keeps the diagonal: a position sees itself.
    upper = tensor_data(last(lecture_02, "upper"))
    assert all(upper[i][i] == 1 for i in range(3))
    # Truncation at 3 sigma, with sigma = 1/sqrt(input_dim), not at an absolute 3.
    assert last(lecture_02, "sigma") == pytest.approx(1 / 128)
    # Mixed precision tracks float32 closely at first.
    assert last(lecture_02, "steps_together") >= 20
    assert last(lecture_02, "largest_early_gap") <= 0.3
    assert len(last(lecture_02, "float32_losses")) == len(last(lecture_02, "mixed_precision_losses")) == 100
    assert lecture_02.values_of("worked_steps")[-1][0].startswith("g2 = 0 + 3² = 9")


def test_lecture_01_full_bpe_explained(lecture_01):
    merges = last(lecture_01, "learned_merges")
    assert len(merges) == last(lecture_01, "vocab_size") - 256 - 1 == 5
    assert last(lecture_01, "special_token") == b"<|endoftext|>"
    assert last(lecture_01, "space_id") == 221
    # Three pairs tie in the first round; the lexicographically greatest wins.
    tied = last(lecture_01, "tied_pairs")
    assert tied == [(b"a", b"t"), (b"h", b"e"), (b"t", b"h")] and merges[0] == tied[-1]
    assert "the" in last(lecture_01, "segments") and "the " not in last(lecture_01, "segments")


SEEDS = ROOT.parent / "shared" / "seeds"
CYRILLIC_RUN = r"[\u0400-\u04FF]+(?:[\s,.!?:;-]+[\u0400-\u04FF]+)*"
CJK = r"[\u3000-\u30FF\u3400-\u9FFF\uFF00-\uFFEF]"


def text_strings(name: str) -> list[tuple[int, str]]:
    """(line, text) of every text() call in a lecture; an f-string's values count as a gap."""
    tree = ast.parse((ROOT / "lectures" / f"{name}.py").read_text(encoding="utf-8"))
    strings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "text" and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                strings.append((node.lineno, argument.value))
            elif isinstance(argument, ast.JoinedStr):
                strings.append((node.lineno, " \x00 ".join(part.value for part in argument.values
                                                           if isinstance(part, ast.Constant))))
    return strings


@pytest.fixture(scope="module")
def seed_check():
    """seed_check(text) -> what in `text` comes from the seeds: runs of seven prose words in a row,
    Chinese, or Russian other than the short example strings the seeds themselves use."""
    import re

    if not SEEDS.is_dir():
        pytest.skip(f"the seed documents are not at {SEEDS}")
    seeds = "\n".join(path.read_text(encoding="utf-8") for path in sorted(SEEDS.glob("*.txt")))

    def prose_words(text: str) -> list[str]:
        return re.findall(r"[a-z]{2,}", text.lower())  # formulas and numbers do not count

    seed_words = prose_words(seeds)
    seed_runs = {tuple(seed_words[i:i + 7]) for i in range(len(seed_words) - 6)}

    def check(text: str) -> list[str]:
        words = prose_words(text)
        problems = [f"seven words of the seeds: {' '.join(words[i:i + 7])!r}"
                    for i in range(len(words) - 6) if tuple(words[i:i + 7]) in seed_runs]
        if re.search(CJK, text):
            problems.append("Chinese text")
        problems += [f"Russian that is not a short example string of the seeds: {russian!r}"
                     for russian in re.findall(CYRILLIC_RUN, text)
                     if len(russian.split()) > 3 or russian not in seeds]
        return problems

    check.seeds = seeds
    return check


@pytest.mark.parametrize("name", ["lecture_01", "lecture_02"])
def test_no_seed_sentence_is_carried_over(seed_check, name):
    strings = text_strings(name)
    assert len(strings) > 100
    for line, text in strings:
        problems = seed_check(text)
        assert not problems, f"{name}.py:{line}: {problems[0]}"


def test_seed_check_catches_a_carried_over_sentence(seed_check):
    """The check is not vacuous: a seed's Russian sentence, or seven of its words, fail it."""
    import re

    russian_sentence = next(run for run in re.findall(CYRILLIC_RUN, seed_check.seeds) if len(run.split()) > 6)
    assert seed_check(f"As the seeds put it: {russian_sentence}")
    english_words = re.findall(r"[a-z]{2,}", seed_check.seeds.lower())
    borrowed = " ".join(english_words[1000:1007])
    assert seed_check(f"We say it thus: {borrowed}.")
    assert seed_check("Mixed Chinese: 内存成本")
    assert not seed_check('The example string "мама мыла раму, 👋👋" and the word "мама" are fine.')


def chinese_figure_texts(trace, folder: Path) -> dict[str, list[str]]:
    """Each figure's English title -> the texts of its Chinese drawing (Chinese SVGs keep text as text)."""
    import base64
    import html
    import re

    texts = {}
    for step in trace.steps:
        for rendering in step.renderings:
            if rendering["type"] != "plot":
                continue
            source = rendering["translations"]["zh"]["src"]
            if source.startswith("data:"):
                svg = base64.b64decode(source.split(",", 1)[1]).decode("utf-8")
            else:
                svg = (folder / source).read_text(encoding="utf-8")
            found = re.findall(r"<text[^>]*>(.*?)</text>", svg, re.DOTALL)
            texts[rendering["alt"]] = [html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for text in found]
    return texts


@pytest.mark.parametrize("name, expected", [
    ("lecture_01", {"GPU memory levels (A100): fast code keeps data near the cores": ["紧挨计算核心", "L2 缓存"],
                    "Prefill works on many tokens per weight read; decode on one": ["受计算限制", "受内存限制"],
                    "Design decisions along the pipeline, all made under a resource budget": ["数据", "去重"],
                    "Compute-optimal model and data size (D* = 20 N*)": ["参数量 N*"]}),
    ("lecture_02", {"Bits of float32: sign, exponent (range), mantissa (precision)": ["符号位", "尾数位"],
                    "One training step costs 6 FLOPs per token per parameter": ["前向传播：2", "反向传播：4"],
                    "Memory of one training step, by optimizer": ["优化器状态", "640 字节"],
                    "The same run in float32 and in mixed precision": ["混合精度（前向用 bfloat16）"]}),
])
def test_figure_annotations_legends_and_ticks_are_drawn_in_chinese(traced, request, name, expected):
    texts = chinese_figure_texts(request.getfixturevalue(name), traced[1])
    for title, chinese in expected.items():
        assert title in texts, f"no figure titled {title!r} in {name}"
        for word in chinese:
            assert any(word in text for text in texts[title]), f"{word!r} missing from the Chinese {title!r}"
    english = {"compute-bound", "memory-bound", "beside the cores", "sign bits", "forward", "parameters",
               "mixed precision (bfloat16 forward)", "deduplication"}
    assert not english & {text for drawn in texts.values() for text in drawn}


@pytest.mark.parametrize("name", ["lecture_01", "lecture_02"])
def test_every_text_of_ours_has_both_translations(request, name):
    """No text() is built from English pieces the catalogs cannot see (verbatim text is exact, not translated)."""
    for step in request.getfixturevalue(name).steps:
        for rendering in step.renderings:
            if rendering["type"] == "markdown" and 'class="verbatim"' not in rendering["html"]:
                assert set(rendering.get("translations", {})) == {"ru", "zh"}, rendering["html"][:200]


def test_lecture_02_adagrad_steps_read_without_english_in_translation(lecture_02):
    [sentence] = [r for step in lecture_02.steps for r in step.renderings
                  if r["type"] == "markdown" and "First step: g2 = 0 + 3² = 9" in r["html"]]
    for language in ("ru", "zh"):
        assert " and " not in sentence["translations"][language]["html"]


def test_lecture_02_adagrad_prose_follows_an_edit_of_its_numbers(tmp_path):
    """The worked AdaGrad example's sentence is built from the run: new gradients, new prose."""
    source = (ROOT / "lectures" / "lecture_02.py").read_text(encoding="utf-8")
    assert "gradients = (3.0, 4.0)" in source
    edited = tmp_path / "lecture_02.py"
    edited.write_text(source.replace("gradients = (3.0, 4.0)", "gradients = (1.0, 2.0)"), encoding="utf-8")
    process = subprocess.run(
        [sys.executable, "-m", "cs336_lectures", "trace", str(edited), "--section", "optimizer_state_by_hand",
         "-o", str(tmp_path / "out"), "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, process.stderr
    trace = load_trace(tmp_path / "out" / "lecture_02.optimizer_state_by_hand.json")
    prose = " ".join(r["html"] for step in trace.steps for r in step.renderings if r["type"] == "markdown")
    assert "two gradients, 1 then 2" in prose
    assert "First step: g2 = 0 + 1² = 1, w = 2 - 0.1 x 1 / √1 = 1.9" in prose
