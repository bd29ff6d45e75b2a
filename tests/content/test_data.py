"""Token files on disk and the properties of get_batch."""

import os
import random
import sys

import numpy as np
import pytest
import torch

from cs336_lectures.atomic import write_atomically
from cs336_lectures.data import get_batch, load_tokens, save_tokens


def test_tokens_round_trip_as_raw_binary_through_memmap(tmp_path):
    path = tmp_path / "data.bin"
    tokens = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], dtype=np.int32)
    save_tokens(tokens, path)
    assert path.read_bytes() == tokens.tobytes()  # no header: raw values only
    data = load_tokens(path)
    assert isinstance(data, np.memmap)
    assert np.array_equal(data, tokens)
    assert list(tmp_path.iterdir()) == [path]  # the temporary file is gone


def test_smaller_dtype_and_out_of_range_ids(tmp_path):
    path = tmp_path / "data.bin"
    save_tokens([0, 50256, 65535], path, dtype=np.uint16)
    assert path.stat().st_size == 6
    assert load_tokens(path, dtype=np.uint16).tolist() == [0, 50256, 65535]
    with pytest.raises(ValueError, match="outside"):
        save_tokens([70000], path, dtype=np.uint16)
    assert load_tokens(path, dtype=np.uint16).tolist() == [0, 50256, 65535]  # left intact
    with pytest.raises(ValueError, match="integers"):
        save_tokens([1.5], path)


def test_loading_refuses_files_that_cannot_hold_the_dtype(tmp_path):
    path = tmp_path / "odd.bin"
    path.write_bytes(b"\x00" * 6)
    with pytest.raises(ValueError, match="whole number"):
        load_tokens(path, dtype=np.int32)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        load_tokens(empty)


def test_batch_shapes_dtypes_and_shift(tmp_path):
    save_tokens(np.arange(1000), tmp_path / "data.bin")
    data = load_tokens(tmp_path / "data.bin")
    inputs, targets = get_batch(data, batch_size=8, context_length=16, device="cpu")
    for tensor in (inputs, targets):
        assert tensor.shape == (8, 16)
        assert tensor.dtype == torch.int64
        assert tensor.device == torch.device("cpu")
    assert torch.equal(targets, inputs + 1)  # on arange data: each target is the next token
    assert torch.equal(inputs[:, 1:], targets[:, :-1])
    assert torch.all(inputs[:, 0] <= 1000 - 16 - 1)


def test_starts_are_uniform_over_every_valid_position():
    context_length, num_starts = 4, 5
    data = np.arange(context_length + num_starts)
    generator = torch.Generator().manual_seed(0)
    inputs, targets = get_batch(data, 5000, context_length, "cpu", generator=generator)
    counts = torch.bincount(inputs[:, 0], minlength=num_starts)
    assert len(counts) == num_starts  # no start beyond the last valid one
    assert torch.all((counts > 900) & (counts < 1100))  # 1000 expected each
    assert targets.max().item() == len(data) - 1  # the last token is reachable as a target


def test_shortest_data_and_too_short_data():
    inputs, targets = get_batch(np.arange(5), 3, 4, "cpu")
    assert torch.equal(inputs, torch.tensor([[0, 1, 2, 3]] * 3))
    assert torch.equal(targets, torch.tensor([[1, 2, 3, 4]] * 3))
    with pytest.raises(ValueError, match="at least 5"):
        get_batch(np.arange(4), 1, 4, "cpu")
    with pytest.raises(ValueError, match="positive"):
        get_batch(np.arange(10), 0, 4, "cpu")
    with pytest.raises(ValueError, match="integer"):
        get_batch(np.linspace(0, 1, 10), 1, 4, "cpu")


def test_generator_makes_batches_reproducible_without_touching_global_rng():
    data = torch.arange(100, dtype=torch.int32)
    global_state = torch.get_rng_state()
    first = get_batch(data, 4, 8, "cpu", generator=torch.Generator().manual_seed(7))
    second = get_batch(data, 4, 8, "cpu", generator=torch.Generator().manual_seed(7))
    assert torch.equal(torch.get_rng_state(), global_state)
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    assert first[0].dtype == torch.int64
    from_list = get_batch(list(range(100)), 4, 8, "cpu", generator=torch.Generator().manual_seed(7))
    assert torch.equal(from_list[0], first[0])


def test_cuda_batches_are_pinned_and_copied_without_blocking(monkeypatch):
    # Stand-ins for the two calls, so the CUDA path can be checked on any machine.
    calls = []

    def fake_pin_memory(tensor):
        calls.append("pin_memory")
        return tensor

    def fake_to(tensor, device, non_blocking=False):
        calls.append(("to", torch.device(device).type, non_blocking))
        return tensor

    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin_memory)
    monkeypatch.setattr(torch.Tensor, "to", fake_to)
    inputs, targets = get_batch(np.arange(20), 2, 4, "cuda")
    assert calls == ["pin_memory", ("to", "cuda", True)] * 2
    assert torch.equal(targets, inputs + 1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_batches_land_on_the_gpu():
    inputs, targets = get_batch(np.arange(random.randint(50, 100)), 4, 8, "cuda")
    torch.cuda.synchronize()
    assert inputs.is_cuda and targets.is_cuda
    assert torch.equal(targets.cpu(), inputs.cpu() + 1)


def test_starts_pass_a_chi_square_test_and_reach_the_last_valid_start():
    context_length, num_starts, draws = 5, 37, 37_000
    data = np.arange(context_length + num_starts, dtype=np.uint16)
    generator = torch.Generator().manual_seed(123)
    inputs, _ = get_batch(data, draws, context_length, "cpu", generator=generator)
    counts = torch.bincount(inputs[:, 0], minlength=num_starts).double()
    assert len(counts) == num_starts and counts[-1] > 0  # the last valid start, none beyond
    expected = draws / num_starts
    chi_square = ((counts - expected) ** 2 / expected).sum().item()
    assert chi_square < 67.98  # the 0.999 quantile for 36 degrees of freedom


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.uint32, np.int64])
def test_every_integer_dtype_comes_back_as_int64(dtype):
    inputs, targets = get_batch(np.arange(50).astype(dtype), 3, 7, torch.device("cpu"))
    assert inputs.dtype == targets.dtype == torch.int64
    assert torch.equal(targets, inputs + 1)


@pytest.mark.skipif(sys.platform != "linux", reason="reads peak memory from getrusage (KiB)")
def test_a_memmap_larger_than_wanted_in_memory_is_not_read_whole(tmp_path):
    resource = pytest.importorskip("resource")
    path = tmp_path / "big.bin"
    with open(path, "wb") as file:
        file.truncate(1 << 30)  # 1 GiB of zero tokens, sparse: no disk used
    data = load_tokens(path, dtype=np.uint16)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    inputs, targets = get_batch(data, 64, 256, "cpu", generator=torch.Generator().manual_seed(0))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert inputs.shape == targets.shape == (64, 256)
    assert grown_mib < 100  # reading the file whole would take 1024 MiB
    assert isinstance(data, np.memmap) and len(data) == 1 << 29


def test_files_are_written_with_ordinary_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        save_tokens([1, 2, 3], tmp_path / "data.bin")
    finally:
        os.umask(umask)
    assert (tmp_path / "data.bin").stat().st_mode & 0o777 == 0o644  # not mkstemp's 0o600


def test_write_atomically_keeps_the_old_file_when_the_writer_fails(tmp_path):
    path = tmp_path / "data.bin"
    write_atomically(path, lambda file: file.write(b"old"))

    def failing_writer(file):
        file.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, failing_writer)
    assert path.read_bytes() == b"old"
    assert list(tmp_path.iterdir()) == [path]
    with pytest.raises(FileNotFoundError, match="no folder"):
        save_tokens([1], tmp_path / "missing" / "data.bin")
