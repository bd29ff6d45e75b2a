"""Memory, FLOPs, peaks/MFU and napkin math, checked against the numbers lecture 2 states."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from cs336_lectures.accounting import (
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
    assert mfu(1e12, None) is None
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
