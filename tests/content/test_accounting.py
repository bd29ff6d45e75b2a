"""Memory, FLOPs, peaks/MFU and napkin math, checked against the numbers lecture 2 states."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from cs336_lectures.accounting import (
    COMPARED_DTYPES,
    PEAKS,
    SPARSITY_FACTOR,
    backward_flops,
    bytes_per_parameter,
    days_to_train,
    dtype_info,
    dtype_table,
    forward_backward_flops,
    forward_flops,
    get_memory_usage,
    largest_model,
    match_device,
    matmul_flops,
    measure_matmul,
    mfu,
    peak_flop_per_sec,
    precision_of,
    promised_flop_per_sec,
    same_storage,
    seconds_to_train,
    time_matmul,
    training_flops,
    training_step_memory,
)
from cs336_lectures.accounting import timing
from cs336_lectures.models import Cruncher, get_num_parameters
from cs336_lectures.optimizers import AdaGrad, AdamW, get_num_state_values

H100 = "NVIDIA H100 80GB HBM3"


# --- memory -------------------------------------------------------------------------------

def test_memory_usage_is_values_times_bytes():
    assert get_memory_usage(torch.zeros(4, 8)) == 128
    assert get_memory_usage(torch.zeros(4, 8, dtype=torch.bfloat16)) == 64
    # One GPT-3 feed-forward matrix, sized on the meta device so nothing is allocated.
    assert get_memory_usage(torch.empty(12288 * 4, 12288, device="meta")) == 2304 * 1024 * 1024


def test_views_share_storage_and_copies_do_not():
    x = torch.tensor([[1.0, 2, 3], [4, 5, 6]])
    for view in (x[0], x[:, 1], x.view(3, 2), x.transpose(1, 0)):
        assert same_storage(x, view)
    y = x.transpose(1, 0)
    x[0][0] = 100
    assert y[0][0] == 100
    assert not same_storage(x, x.transpose(1, 0).contiguous().view(2, 3))
    assert not same_storage(x, x.clone())


def test_same_storage_on_more_views_and_copies():
    x = torch.arange(24.0).reshape(2, 3, 4)
    views = (x[1], x[:, 1:], x[..., ::2], x.permute(2, 0, 1), x.flatten(), x.unsqueeze(0),
             x.narrow(2, 1, 2), x.diagonal(), x.expand(5, 2, 3, 4), x[1:1])
    for view in views:
        assert same_storage(x, view) and same_storage(view, x)
    assert same_storage(x[0], x[1])  # disjoint slices, one storage
    for copy in (x.clone(), x.permute(2, 0, 1).contiguous(), x + 0, torch.zeros_like(x),
                 x.to(torch.float64), x.reshape(2, 12).T.reshape(24)):
        assert not same_storage(x, copy)


def test_same_storage_tells_apart_tensors_without_an_address():
    # Empty and meta tensors all report data_ptr() == 0; they are still separate storages.
    empty = torch.empty(0)
    assert same_storage(empty, empty.view(0, 3))
    assert not same_storage(empty, torch.empty(0))
    meta = torch.empty(4, 8, device="meta")
    assert same_storage(meta, meta[1:])
    assert not same_storage(meta, torch.empty(4, 8, device="meta"))
    assert not same_storage(torch.zeros(3), torch.zeros(3, device="meta"))


def test_memory_usage_of_other_dtypes_and_views():
    for dtype, size in ((torch.float64, 8), (torch.int8, 1), (torch.float8_e5m2, 1),
                        (torch.int64, 8), (torch.bool, 1)):
        assert get_memory_usage(torch.zeros(3, 5, dtype=dtype)) == 15 * size
    x = torch.zeros(10, 10)
    assert get_memory_usage(x[:2]) == 80  # a view's own values, not the whole storage
    assert get_memory_usage(torch.zeros(0)) == 0


def test_dtype_table_is_torch_finfo_for_all_five_formats():
    for row, dtype in zip(dtype_table(), COMPARED_DTYPES, strict=True):
        info = torch.finfo(dtype)
        assert row.name == str(dtype).removeprefix("torch.")
        assert (row.bytes, row.largest, row.smallest_normal, row.eps) == (
            info.bits // 8, info.max, info.smallest_normal, info.eps)
    rows = {row.name: row for row in dtype_table()}
    assert rows["float8_e4m3fn"].smallest_normal == 2.0**-6 and rows["float8_e4m3fn"].eps == 0.125
    assert rows["float8_e5m2"].smallest_normal == 2.0**-14 and rows["float8_e5m2"].eps == 0.25


def test_dtype_table_matches_finfo_and_the_lecture():
    rows = {row.name: row for row in dtype_table()}
    assert list(rows) == ["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]
    assert [row.bytes for row in rows.values()] == [4, 2, 2, 1, 1]
    assert rows["float16"].largest == 65504
    assert rows["float16"].smallest_normal == pytest.approx(6.1e-5, rel=1e-2)
    assert rows["float16"].eps == pytest.approx(9.8e-4, rel=1e-2)
    assert rows["bfloat16"].largest == pytest.approx(3.39e38, rel=1e-2)
    assert rows["bfloat16"].smallest_normal == rows["float32"].smallest_normal
    assert rows["bfloat16"].eps == pytest.approx(7.8e-3, rel=1e-2)
    assert rows["float32"].eps == pytest.approx(1.19e-7, rel=1e-2)
    assert rows["float8_e4m3fn"].largest == 448
    assert rows["float8_e5m2"].largest == 57344
    with pytest.raises(ValueError, match="floating-point"):
        dtype_info(torch.int32)


def test_float16_underflows_where_bfloat16_does_not():
    assert torch.tensor([1e-8], dtype=torch.float16).item() == 0
    kept = torch.tensor([1e-8], dtype=torch.bfloat16).item()
    assert kept != 0 and kept == pytest.approx(1e-8, rel=1e-2)
    # The reason: 1e-8 is far below float16's smallest normal, within bfloat16's range.
    assert 1e-8 < dtype_info(torch.float16).smallest_normal
    assert 1e-8 > dtype_info(torch.bfloat16).smallest_normal


# --- FLOPs --------------------------------------------------------------------------------

def test_matmul_flops_agree_with_torch_flop_counter():
    a, b = torch.ones(16, 32), torch.ones(32, 8)
    with FlopCounterMode(display=False) as counter:
        a @ b
    assert counter.get_total_flops() == matmul_flops(16, 32, 8) == 2 * 16 * 32 * 8


def test_backward_costs_twice_the_forward_for_a_two_layer_linear_model():
    batch, dim, outputs = 8, 16, 4
    x = torch.ones(batch, dim, requires_grad=True)  # the lecture counts x's gradient too
    w1 = torch.randn(dim, dim, requires_grad=True)
    w2 = torch.randn(dim, outputs, requires_grad=True)
    with FlopCounterMode(display=False) as forward_counter:
        loss = (x @ w1 @ w2).pow(2).mean()
    with FlopCounterMode(display=False) as backward_counter:
        loss.backward()
    num_parameters = dim * dim + dim * outputs
    assert forward_counter.get_total_flops() == forward_flops(batch, num_parameters)
    assert backward_counter.get_total_flops() == backward_flops(batch, num_parameters)
    assert forward_backward_flops(batch, num_parameters) == 6 * batch * num_parameters


def test_gradient_of_the_worked_example():
    x = torch.tensor([1.0, 2, 3])
    w = torch.tensor([1.0, 1, 1], requires_grad=True)
    loss = 0.5 * (x @ w - 5).pow(2)
    loss.backward()
    assert torch.equal(w.grad, torch.tensor([1.0, 2, 3]))


def test_flop_counts_on_other_sizes():
    assert matmul_flops(3, 5, 7) == 210
    assert (forward_flops(10, 100), backward_flops(10, 100)) == (2000, 4000)
    assert forward_backward_flops(10, 100) == 6000
    assert training_flops(2.5e9, 125e6) == pytest.approx(1.875e18)


def test_training_flops_of_70b_on_15t_tokens():
    assert training_flops(15e12, 70e9) == pytest.approx(6.3e24)


# --- peaks and MFU ------------------------------------------------------------------------

@pytest.mark.parametrize("name, key", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA A100-SXM4-80GB", "A100"),
    ("NVIDIA A100-PCIE-40GB", "A100"),
    ("NVIDIA A100 80GB PCIe", "A100"),
    ("NVIDIA GeForce RTX 4080", "RTX 4080"),
    ("nvidia geforce rtx 4080", "RTX 4080"),
    ("NVIDIA GeForce RTX 4080 SUPER", None),
    ("NVIDIA GeForce RTX 4080 Laptop GPU", None),
    ("NVIDIA GeForce RTX 4090", None),
    ("NVIDIA H800", None),
    ("NVIDIA GH200 480GB", None),
    ("Tesla T4", None),
])
def test_device_names_match_the_right_table_entry(name, key):
    assert match_device(name) == key


def test_sparse_figures_are_halved_for_dense_matmuls():
    assert SPARSITY_FACTOR == 2
    assert PEAKS["H100 SXM"]["bf16"].quoted == 1979e12
    assert peak_flop_per_sec(H100, torch.bfloat16).flop_per_sec == 989.5e12
    assert peak_flop_per_sec("NVIDIA H200", torch.bfloat16).flop_per_sec == 989.5e12
    assert peak_flop_per_sec("NVIDIA A100-SXM4-80GB", torch.bfloat16).flop_per_sec == 312e12
    assert peak_flop_per_sec("NVIDIA A100-SXM4-80GB", torch.float32).flop_per_sec == 19.5e12
    assert peak_flop_per_sec("NVIDIA GeForce RTX 4080", torch.bfloat16).flop_per_sec == 97.5e12
    assert "sparsity" in peak_flop_per_sec(H100, torch.bfloat16).note
    for precisions in PEAKS.values():
        for peak in precisions.values():
            assert peak.dense == (peak.quoted / 2 if peak.with_sparsity else peak.quoted)


@pytest.mark.parametrize("name, dtype, dense_tflops", [
    # NVIDIA's datasheets, dense (sparse figures halved): A100 bf16 312 and fp32 19.5;
    # H100 SXM bf16 989.5 of 1979 sparse; H100 PCIe 756.5 of 1513; H200 as H100 SXM;
    # RTX 4080 bf16 with fp32 accumulation 97.5 (Ada whitepaper).
    ("NVIDIA A100-SXM4-40GB", torch.float16, 312),
    ("NVIDIA H100 80GB HBM3", torch.float16, 989.5),
    ("NVIDIA H100 80GB HBM3", torch.float8_e5m2, 1979),
    ("NVIDIA H100 PCIe", torch.bfloat16, 756.5),
    ("NVIDIA H100 PCIe", torch.float32, 51),
    ("NVIDIA H100 NVL", torch.bfloat16, 835.5),
    ("NVIDIA H200", torch.bfloat16, 989.5),
    ("NVIDIA H200", torch.float8_e4m3fn, 1979),
    ("NVIDIA H200 NVL", torch.bfloat16, 835.5),
    ("NVIDIA GeForce RTX 4080", torch.float32, 48.7),
    ("NVIDIA GeForce RTX 4080", torch.float8_e4m3fn, 194.9),
])
def test_dense_peaks_are_the_datasheet_figures(name, dtype, dense_tflops):
    previous = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert peak_flop_per_sec(name, dtype).flop_per_sec == pytest.approx(dense_tflops * 1e12)
    finally:
        torch.set_float32_matmul_precision(previous)


def test_float32_peak_depends_on_tf32_setting():
    previous = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert precision_of(torch.float32) == "fp32"
        assert peak_flop_per_sec(H100, torch.float32).flop_per_sec == 67e12
        torch.set_float32_matmul_precision("high")
        assert precision_of(torch.float32) == "tf32"
        assert peak_flop_per_sec(H100, torch.float32).flop_per_sec == 494.5e12
    finally:
        torch.set_float32_matmul_precision(previous)


def test_unknown_devices_and_dtypes_get_no_invented_number():
    for promised in (promised_flop_per_sec("cpu", torch.float32),
                     peak_flop_per_sec("Tesla T4", torch.bfloat16),
                     peak_flop_per_sec("NVIDIA A100-SXM4-80GB", torch.float8_e4m3fn),
                     peak_flop_per_sec(H100, torch.float64)):
        assert promised.flop_per_sec is None
        assert "no MFU" in promised.note


def test_mfu():
    assert mfu(494.75e12, 989.5e12) == 0.5
    assert mfu(actual=494.75e12, promised=989.5e12) == 0.5  # the names the issue uses
    assert mfu(1e12, None) is None
    assert mfu(494.75e12, peak_flop_per_sec("NVIDIA H200", torch.bfloat16)) == 0.5
    cpu = promised_flop_per_sec("cpu", torch.float32)
    assert mfu(1e12, cpu) is None and "no MFU" in cpu.note
    with pytest.raises(ValueError):
        mfu(1e12, 0)


def test_time_matmul_and_measure_on_cpu():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    assert time_matmul(a, b, num_warmup=1, num_trials=3) > 0
    result = measure_matmul(a, b, num_warmup=1, num_trials=3)
    assert result.flops == matmul_flops(64, 32, 16)
    assert result.flop_per_sec == pytest.approx(result.flops / result.seconds)
    assert result.promised.flop_per_sec is None and result.mfu is None
    with pytest.raises(ValueError, match="cannot multiply"):
        time_matmul(a, a)
    with pytest.raises(ValueError, match="num_trials"):
        time_matmul(a, b, num_trials=0)


def test_time_matmul_warms_up_then_reports_the_median_of_synchronised_trials(monkeypatch):
    events = []

    class Counted(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func.__name__ in ("__matmul__", "matmul"):
                events.append("matmul")
            return super().__torch_function__(func, types, args, kwargs or {})

    clock = iter([0.0, 5.0, 10.0, 11.0, 20.0, 29.0, 30.0, 32.0])  # trials of 5, 1, 9, 2 s

    def fake_clock():
        events.append("clock")
        return next(clock)

    monkeypatch.setattr(timing.time, "perf_counter", fake_clock)
    monkeypatch.setattr(timing, "_synchronize", lambda device: events.append("sync"))
    a = torch.ones(4, 3).as_subclass(Counted)
    b = torch.ones(3, 2).as_subclass(Counted)
    assert time_matmul(a, b, num_warmup=3, num_trials=4) == 3.5  # median of 1, 2, 5, 9
    # Every timed matmul is waited for before the clock stops (a CUDA matmul only queues).
    assert events == ["matmul"] * 3 + ["sync"] + ["clock", "matmul", "sync", "clock"] * 4


def test_cuda_timing_waits_for_the_device(monkeypatch):
    synced = []
    monkeypatch.setattr(torch.cuda, "synchronize", synced.append)
    timing._synchronize(torch.device("cuda:1"))
    timing._synchronize(torch.device("cpu"))
    assert synced == [torch.device("cuda:1")]


def test_time_matmul_refuses_what_cannot_be_multiplied():
    for a, b in ((torch.ones(3), torch.ones(4)), (torch.ones(2, 3), torch.ones(4)),
                 (torch.tensor(1.0), torch.ones(2)), (torch.ones(2, 3), torch.ones(2, 3))):
        with pytest.raises(ValueError, match="cannot multiply"):
            time_matmul(a, b)
    assert time_matmul(torch.ones(2, 3), torch.ones(3), num_warmup=0, num_trials=1) >= 0
    with pytest.raises(ValueError, match="on meta"):
        time_matmul(torch.ones(2, 2), torch.ones(2, 2, device="meta"))


# --- napkin math --------------------------------------------------------------------------

def test_70b_on_15t_tokens_on_1024_h100s_takes_about_144_days():
    h100 = peak_flop_per_sec(H100, torch.bfloat16).flop_per_sec
    assert days_to_train(70e9, 15e12, 1024, h100, mfu=0.5) == pytest.approx(144, abs=0.5)


def test_largest_model_on_8_h100s_with_adamw_is_40b():
    assert bytes_per_parameter(AdamW.state_values_per_parameter) == 16
    assert largest_model(8 * 80e9, bytes_per_parameter(2)) == pytest.approx(40e9)


def test_125m_on_2_5b_tokens_on_4_rtx_4080s_takes_about_12000_seconds():
    rtx_4080 = peak_flop_per_sec("NVIDIA GeForce RTX 4080", torch.bfloat16).flop_per_sec
    seconds = seconds_to_train(125e6, 2.5e9, 4, rtx_4080, mfu=0.4)
    assert seconds == pytest.approx(12_000, rel=0.01)
    assert seconds / 3600 == pytest.approx(3.3, abs=0.05)


def test_napkin_math_on_other_numbers():
    # 1B parameters on 20B tokens, 8 A100s at MFU 0.5: 1.2e20 / (8 * 312e12 * 0.5) seconds.
    assert seconds_to_train(1e9, 20e9, 8, 312e12, mfu=0.5) == pytest.approx(96_153.85)
    assert days_to_train(7e9, 2e12, 256, 989.5e12, mfu=0.4) == pytest.approx(9.595, abs=1e-3)
    assert largest_model(24e9, bytes_per_parameter(2)) == pytest.approx(1.5e9)
    assert bytes_per_parameter(0, bytes_per_value=2) == 4  # SGD in bfloat16
    assert largest_model(80e9, bytes_per_parameter(1, bytes_per_value=2)) == pytest.approx(80e9 / 6)
    assert training_step_memory(100, 20, 100, 200, bytes_per_value=2) == 840


def test_napkin_rejects_nonsense():
    with pytest.raises(ValueError, match="mfu"):
        seconds_to_train(1e9, 1e9, 1, 1e12, mfu=1.5)
    with pytest.raises(ValueError, match="num_devices"):
        days_to_train(1e9, 1e9, 0, 1e12, mfu=0.5)
    with pytest.raises(ValueError):
        training_step_memory(-1, 0, 0, 0)


def test_two_layer_example_memory_is_496_bytes_and_432_flops():
    batch, dim, num_layers = 2, 4, 2
    model = Cruncher(dim=dim, num_layers=num_layers)
    optimizer = AdaGrad(model.parameters(), lr=0.01)
    activations = []
    for layer in model.layers:  # the lecture counts the output of every hidden layer
        layer.register_forward_hook(lambda module, inputs, output: activations.append(output))
    loss = torch.nn.functional.mse_loss(model(torch.randn(batch, dim)), torch.tensor([4.0, 5.0]))
    loss.backward()
    optimizer.step()

    num_parameters = get_num_parameters(model)
    num_activations = sum(a.numel() for a in activations)
    num_gradients = sum(p.grad.numel() for p in model.parameters())
    num_optimizer_states = get_num_state_values(optimizer)
    counts = (num_parameters, num_activations, num_gradients, num_optimizer_states)
    assert counts == (36, 16, 36, 36)
    assert training_step_memory(num_parameters, num_activations, num_gradients,
                                num_optimizer_states, bytes_per_value=4) == 496
    assert forward_backward_flops(batch, num_parameters) == 432
