"""Every rank of a distributed program: the tracer follows torch.multiprocessing.spawn and
multiprocessing.Process into the lecture's worker processes (cs336_lectures/runtime/tracing/ranks.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cs336_lectures import load_trace
from cs336_lectures.runtime.trace.format import Trace
from cs336_lectures.runtime.tracing.ranks import _has_ended, _peek_exit_code, merge_parts

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def trace(lecture: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", str(lecture), "-o", str(out), "--quiet", *extra],
                          cwd=lecture.parent, capture_output=True, text=True, timeout=300, env=env)


def traced(tmp_path: Path, name: str, source: str, validate_trace, returncode: int = 0) -> tuple[subprocess.CompletedProcess, Trace]:
    """Trace `source` saved as NAME.py: the finished process and its trace, checked against the schema."""
    lecture = tmp_path / f"{name}.py"
    lecture.write_text(source)
    done = trace(lecture, tmp_path / "out")
    assert done.returncode == returncode, done.stderr
    path = tmp_path / "out" / f"{name}.json"
    validate_trace(path)
    return done, load_trace(path)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces")
    done = trace(ROOT / "lectures" / "example_distributed.py", out)
    assert done.returncode == 0, done.stderr
    return out / "example_distributed.json"


def test_every_rank_has_its_steps(example, validate_trace):
    raw = validate_trace(example)
    loaded = load_trace(example)
    world_size = 2
    assert [(rank.group, rank.rank, rank.status) for rank in loaded.ranks] == [(0, r, "ok") for r in range(world_size)]
    for rank in loaded.ranks:
        assert {step.function for step in rank.steps} >= {"worker", "all_reduce", "data_parallel_step"}
        assert all(step.rank == rank.rank for step in rank.steps)
        # A rank's stack starts in the lecture's main(), at the line that spawned the processes.
        assert rank.steps[0].stack[0][1] == "main" and "mp.spawn" in _line(raw, rank.steps[0].stack[0][2])
    parent = [step for step in loaded.steps if step.rank is None]
    assert parent[0].function == "main" and parent[-1].function == "main"
    assert len(parent) + sum(len(rank.steps) for rank in loaded.ranks) == len(loaded.steps)


def _line(raw: dict, number: int) -> str:
    return raw["files"][0]["source"].splitlines()[number - 1]


def test_all_reduce_gives_every_rank_the_same_sum(example):
    ranks = load_trace(example).ranks
    before = [rank.values_of("x")[0]["data"] for rank in ranks]
    after = [rank.values_of("x")[1]["data"] for rank in ranks]
    assert before == [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]
    assert after == [[3.0, 6.0, 9.0]] * 2
    # The data-parallel step: different losses, equal averaged gradients and equal weights afterwards.
    losses = [rank.values_of("loss")[0]["data"] for rank in ranks]
    assert losses[0] != losses[1]
    assert ranks[0].values_of("grad")[-1]["data"] == ranks[1].values_of("grad")[-1]["data"]
    assert ranks[0].values_of("weight")[-1]["data"] == ranks[1].values_of("weight")[-1]["data"]


def test_collectives_record_their_tensors_before_and_after(example):
    loaded = load_trace(example)
    for rank in loaded.ranks:
        ops = [record["op"] for step in rank.steps for record in step.collectives]
        assert ops == ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_reduce"]
        [gather] = [record for step in rank.steps for record in step.collectives if record["op"] == "all_gather"]
        values = {name: (before, after) for name, before, after in gather["values"]}
        assert values["tensor"][0]["data"] == [float(rank.rank)] * 2
        assert [piece["data"] for piece in values["tensor_list"][0]] == [[0.0, 0.0]] * 2
        assert [piece["data"] for piece in values["tensor_list"][1]] == [[0.0, 0.0], [1.0, 1.0]]
        # Reduce-scatter: rank r keeps the sum over ranks of slice r (rank + r on each rank).
        assert rank.values_of("mine")[-1]["data"] == [float(0 + rank.rank + 1 + rank.rank)]
    broadcasts = [record for step in loaded.steps for record in step.collectives if record["op"] == "broadcast"]
    assert broadcasts[1]["values"][0][1]["data"] == [0.0, 0.0, 0.0]  # rank 1 before: zeros
    assert broadcasts[1]["values"][0][2] == broadcasts[0]["values"][0][2]  # after: rank 0's tensor


def two_gloo_ranks(body: str, imports: str = "") -> str:
    """A lecture whose main() spawns two ranks on gloo; `body` is the rest of the worker, after it joined."""
    return f'''import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
{imports}

def main():
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    mp.spawn(worker, args=(2, rendezvous), nprocs=2)


def worker(rank, world_size, rendezvous):
    dist.init_process_group("gloo", init_method=f"file://{{rendezvous}}", rank=rank, world_size=world_size)
{body}'''


FAILING_SPAWN = two_gloo_ranks('''\
    x = torch.ones(2) * rank  # @inspect x
    if rank == 1:
        raise ValueError("rank 1 gives up")
    dist.all_reduce(x)  # @inspect x
    unreachable = True  # @inspect unreachable
''')


def test_a_failing_rank_ends_all_ranks_and_keeps_their_steps(tmp_path, validate_trace):
    done, loaded = traced(tmp_path, "failing_spawn", FAILING_SPAWN, validate_trace, returncode=1)
    assert loaded.header["status"] == "error"
    assert loaded.header["message"] == "rank 1 failed: ValueError: rank 1 gives up (failing_spawn.py:18)"
    assert done.stderr.strip().splitlines()[-1].endswith(": rank 1 failed: ValueError: rank 1 gives up (failing_spawn.py:18)")
    zero, one = loaded.ranks
    assert one.status == "error" and one.message.startswith("ValueError: rank 1 gives up")
    assert one.steps[-1].error["type"] == "ValueError" and one.steps[-1].line == 18
    # Rank 0 was waiting in the all-reduce: it stopped because rank 1 failed, its steps kept.
    assert zero.status == "aborted" and zero.message.startswith("after rank 1 failed")
    assert zero.values_of("x")[0]["data"] == [0.0, 0.0]
    assert "unreachable" not in loaded.inspected_names()


FAILING_PROCESSES = '''import multiprocessing
import time


def main():
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=work, args=(rank,)) for rank in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join()
    codes = [process.exitcode for process in workers]  # @inspect codes


def work(rank):
    started = rank  # @inspect started
    if rank == 0:
        raise RuntimeError("rank 0 fails")
    while True:
        time.sleep(0.05)
'''


def test_plain_processes_are_ranks_and_a_failure_ends_the_others(tmp_path, validate_trace):
    _, loaded = traced(tmp_path, "failing_processes", FAILING_PROCESSES, validate_trace)  # the lecture itself ran to its end
    zero, one = loaded.ranks
    assert (zero.rank, zero.status) == (0, "error") and zero.steps[-1].error["message"] == "rank 0 fails"
    assert (one.rank, one.status) == (1, "aborted") and one.values_of("started") == [1]
    assert "ended by SIGTERM" in one.message
    assert loaded.values_of("codes") == [[1, 128 + 15]]  # the second exits as a process ended by SIGTERM does


CLOSED_AND_UNSTARTABLE = '''import multiprocessing


def main():
    context = multiprocessing.get_context("spawn")
    unstartable = context.Process(target=work, args=(lambda: 3,))  # a lambda does not pickle
    try:
        unstartable.start()
    except Exception as error:
        failure = type(error).__name__  # @inspect failure
    process = context.Process(target=work, args=(int,))
    process.start()
    process.join()
    code = process.exitcode  # @inspect code
    process.close()  # after this the Process object answers nothing, not even exitcode


def work(make):
    total = make() * 2  # @inspect total
'''


def test_a_closed_process_is_still_a_rank_and_one_that_never_started_is_none(tmp_path, validate_trace):
    _, loaded = traced(tmp_path, "closed", CLOSED_AND_UNSTARTABLE, validate_trace)
    assert loaded.header["status"] == "ok"
    (failure,) = loaded.values_of("failure")  # the lecture saw its own start() fail, as it would untraced
    assert failure in ("PicklingError", "AttributeError") and loaded.values_of("code") == [0]
    (only,) = loaded.ranks
    assert (only.rank, only.status) == (0, "ok") and only.values_of("total") == [0]


def _exit_with_three() -> None:
    os._exit(3)


def _sleep_long() -> None:
    time.sleep(60)


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="reading an exit code reaps nothing without waitpid")
def test_the_watcher_reads_exit_codes_without_reaping_the_lectures_children():
    """The watcher thread runs beside the lecture's own join(): had it reaped a child, that
    join's waitpid would find none and the lecture would see exitcode None."""
    context = multiprocessing.get_context("fork")
    exits, sleeps = context.Process(target=_exit_with_three), context.Process(target=_sleep_long)
    sleeps.start()
    exits.start()  # second: start() reaps the ended children it knows of (multiprocessing's _cleanup)
    assert not _has_ended(sleeps) and _peek_exit_code(sleeps) is None
    os.kill(sleeps.pid, signal.SIGTERM)
    for process in (exits, sleeps):
        while not _has_ended(process):
            time.sleep(0.01)
    assert (_peek_exit_code(exits), _peek_exit_code(sleeps)) == (3, -signal.SIGTERM)
    assert _peek_exit_code(exits) == 3  # looking twice finds the same: nothing was taken away
    for process in (exits, sleeps):
        assert os.waitpid(process.pid, os.WNOHANG)[0] == process.pid  # still there for its owner to reap


def test_merge_renumbers_the_parent_and_hangs_ranks_under_their_origin():
    parent = {"header": {"num_steps": 3}, "files": [{"path": "a.py"}], "functions": [[0, "main", 1]],
              "calls": [[0, -1]], "steps": [[0, 2], [0, 3], [0, 4, {"x": {}}]],
              "solutions": [{"file": 0, "lines": [3, 4], "steps": [1, 2]}]}
    part = {"status": "ok", "ended": 0.0,
            "trace": {"files": [{"path": "b.py"}, {"path": "a.py"}], "functions": [[1, "worker", 8], [0, "helper", 1]],
                      "calls": [[0, -1], [1, 0]], "steps": [[0, 9], [1, 2, {"r": [{"type": "link", "title": "a", "file": 1, "line": 1}]}]]}}
    merged = merge_parts(parent, [(1, 0, 0, part), (1, 0, 1, json.loads(json.dumps(part)))])
    assert [step[:2] for step in merged["steps"]] == [[0, 2], [0, 3], [1, 9], [2, 2], [3, 9], [4, 2], [0, 4]]
    assert merged["calls"] == [[0, -1], [1, 1], [2, 2], [1, 1], [2, 4]]
    assert merged["functions"] == [[0, "main", 1], [0, "worker", 8], [1, "helper", 1]]
    assert [file["path"] for file in merged["files"]] == ["a.py", "b.py"]
    assert merged["steps"][3][2]["r"][0]["file"] == 0  # the link's file, in the merged list
    assert merged["solutions"] == [{"file": 0, "lines": [3, 4], "steps": [1, 6]}]  # ranks ran inside the block
    assert merged["ranks"] == [{"group": 0, "rank": 0, "steps": [2, 3], "status": "ok"},
                               {"group": 0, "rank": 1, "steps": [4, 5], "status": "ok"}]
    assert merged["header"]["num_steps"] == 7


LONG_RANK = '''import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main():
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    mp.spawn(worker, args=(2, rendezvous), nprocs=2)


def worker(rank, world_size, rendezvous):
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world_size)
    total = 0
    for i in range(100 if rank == 0 else 10):
        total += i
    dist.all_reduce(torch.ones(1))
'''


def test_a_rank_cut_off_by_max_steps_ends_the_others_instead_of_leaving_them_waiting(tmp_path):
    lecture = tmp_path / "long_rank.py"
    lecture.write_text(LONG_RANK)
    done = trace(lecture, tmp_path / "out", "--max-steps", "100")
    assert done.returncode == 1, done.stderr
    zero, one = load_trace(tmp_path / "out" / "long_rank.json").ranks
    assert (zero.status, len(zero.steps)) == ("max_steps", 100)
    assert one.status == "aborted" and one.message.startswith("after rank 0 failed")


FORKED = '''import multiprocessing


def main():
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(rank,)) for rank in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join()


def work(rank):
    square = rank * rank  # @inspect square
    if rank == 1:
        inner = multiprocessing.get_context("fork").Process(target=work, args=(5,))
        inner.start()
        inner.join()
'''


def test_forked_processes_are_ranks_too_and_their_own_children_are_not_followed(tmp_path, validate_trace):
    ranks = traced(tmp_path, "forked", FORKED, validate_trace)[1].ranks
    assert [(rank.rank, rank.status, rank.values_of("square")) for rank in ranks] == [(0, "ok", [0]), (1, "ok", [1])]


BLOCKED = '''import multiprocessing
import os
import signal
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist


def main():
    folder = tempfile.mkdtemp()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=work, args=(rank, folder)) for rank in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join()


def work(rank, folder):
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=2)
    pid_file = Path(folder) / "rank0.pid"
    if rank == 0:
        pid_file.write_text(str(os.getpid()))
        waiting = True  # @inspect waiting
        dist.all_reduce(torch.ones(1))
    else:
        while not pid_file.exists():
            time.sleep(0.05)
        time.sleep(1.0)
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
'''


def test_a_rank_ended_by_sigterm_inside_a_collective_keeps_its_steps(tmp_path, validate_trace):
    """Rank 0 waits in an all-reduce that rank 1 never joins (its main thread inside gloo's C++)
    when SIGTERM comes, as it does when the parent ends the ranks after a failure."""
    zero = traced(tmp_path, "blocked", BLOCKED, validate_trace)[1].ranks[0]
    assert zero.status == "terminated" and zero.message.startswith("ended by SIGTERM")
    assert zero.values_of("waiting") == [True]
    assert zero.steps[-1].line == BLOCKED.splitlines().index("        dist.all_reduce(torch.ones(1))") + 1


def test_a_distributed_trace_is_deterministic(example, tmp_path):
    done = trace(ROOT / "lectures" / "example_distributed.py", tmp_path)
    assert done.returncode == 0, done.stderr
    again, first = (json.loads(path.read_text()) for path in (tmp_path / "example_distributed.json", example))
    for raw in (again, first):
        for key in ("created", "elapsed_s", "command"):  # the time, and the -o folder in the command
            raw["header"].pop(key)
    assert again == first


IMPORTED_BY_NAME = two_gloo_ranks('''\
    x = torch.ones(2) * (rank + 1)
    summed(x)  # @inspect x
    y = torch.full((2,), float(rank))
    broadcast(y, src=1)  # @inspect y
    dist.destroy_process_group()
''', imports="from torch.distributed import all_reduce as summed\nfrom torch.distributed import broadcast\n")


def test_collectives_imported_by_name_are_recorded_too(tmp_path, validate_trace):
    _, loaded = traced(tmp_path, "imported_by_name", IMPORTED_BY_NAME, validate_trace)
    for rank in loaded.ranks:
        records = [record for step in rank.steps for record in step.collectives]
        assert [record["op"] for record in records] == ["all_reduce", "broadcast"]
        assert records[0]["values"][0][1]["data"] == [float(rank.rank + 1)] * 2 and records[0]["values"][0][2]["data"] == [3.0, 3.0]
        assert records[1]["values"][0][2]["data"] == [1.0, 1.0]
