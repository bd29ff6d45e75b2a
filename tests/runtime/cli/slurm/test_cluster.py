"""`trace --executor slurm` and `cs336-lectures jobs` on a real one-node Slurm cluster (conftest.py).

A job's trace must equal a plain trace of the same lecture; failures, time limits and Ctrl-C must
end as they do for a plain run, with the job really gone from the queue. The slowest case (a job
at its one-minute time limit, Slurm's smallest) is submitted first and fetched last, so the
other tests run while it waits."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_executor import SLOW, cancel_with_ctrl_c, comparable

ROOT = Path(__file__).resolve().parents[4]
LECTURES = ROOT / "lectures"
pytestmark = [pytest.mark.slurm, pytest.mark.slow]

FAILING = '''def main():
    ready = 41 + 1  # @inspect ready
    raise ValueError("broken on purpose")
'''

SHORT = '''def main():
    total = sum(range(10))  # @inspect total
'''


def cli(*args: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**env, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(cwd / "config")}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def submitted_id(stderr: str) -> str:
    found = re.search(r"submitted job (\d+) \(slurm\)", stderr)
    assert found, stderr
    return found.group(1)


def in_queue(job_id: str, env: dict[str, str]) -> bool:
    """Whether squeue lists the job; asked again while squeue cannot get an answer from the
    controller (a busy machine), within a guard of two minutes."""
    deadline = time.monotonic() + 120
    while True:
        listed = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%i"], env=env, capture_output=True, text=True,
                                timeout=60)
        if listed.returncode == 0:
            return job_id in listed.stdout.split()
        assert time.monotonic() < deadline, f"squeue failed for two minutes: {listed.stderr.strip()}"
        time.sleep(0.5)


def assert_in_queue(job_id: str, env: dict[str, str]) -> None:
    """The job runs (its own progress file says so): squeue lists it, at the latest once the
    controller has caught up."""
    deadline = time.monotonic() + 120
    while not in_queue(job_id, env):
        assert time.monotonic() < deadline, f"job {job_id} runs but squeue has not listed it for two minutes"
        time.sleep(0.5)


def traced_plainly(lecture: Path, folder: Path, env: dict[str, str]) -> Path:
    done = cli("trace", lecture.name, "-o", "plain", cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    return folder / "plain" / f"{lecture.stem}.json"


@pytest.fixture(scope="module")
def at_time_limit(slurm_cluster, tmp_path_factory) -> tuple[Path, str]:
    """A detached job tracing a lecture that outlives the job's one-minute limit: its folder and id."""
    folder = tmp_path_factory.mktemp("limit")
    (folder / "slow.py").write_text(SLOW)
    done = cli("trace", "slow.py", "-o", "out", "--executor", "slurm", "--time", "1", "--detach", cwd=folder,
               env=slurm_cluster)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stderr)
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"cs336-lectures: `cs336-lectures jobs {job_id}` fetches it once done"
    return folder, job_id


def test_a_detached_job_is_listed_while_it_waits(at_time_limit, slurm_cluster):
    folder, job_id = at_time_limit
    listed = cli("jobs", cwd=folder, env=slurm_cluster)
    assert listed.returncode == 0, listed.stderr
    job, executor, state, files = listed.stdout.split("\t")[:4]
    assert (job, executor, files) == (job_id, "slurm", "slow.py")
    assert state in ("UNKNOWN", "PENDING", "RUNNING")  # UNKNOWN: accounting has not heard of it yet


def test_a_lecture_as_a_job_traces_what_a_plain_run_traces(slurm_cluster, tmp_path):
    lecture = tmp_path / "example_basics.py"
    shutil.copy(LECTURES / lecture.name, lecture)
    plain = traced_plainly(lecture, tmp_path, slurm_cluster)
    done = cli("trace", lecture.name, "-o", "job", "--executor", "slurm", cwd=tmp_path, env=slurm_cluster)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stderr)
    # The job id and its state are shown while waiting, and the steps the job reports.
    assert re.search(rf"^cs336-lectures: job {job_id}: (PENDING|RUNNING|submitted, not yet listed by sacct)", done.stderr, re.MULTILINE), done.stderr
    assert f"cs336-lectures: job {job_id}: RUNNING, tracing, " in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("job/example_basics.json: ok, 57 steps in ")
    assert comparable(tmp_path / "job" / lecture.name.replace(".py", ".json")) == comparable(plain)


def test_several_lectures_are_an_array_one_task_each(slurm_cluster, tmp_path):
    shutil.copy(LECTURES / "example_basics.py", tmp_path / "example_basics.py")
    (tmp_path / "short.py").write_text(SHORT)
    done = cli("trace", "example_basics.py", "short.py", "-o", "job", "--executor", "slurm", cwd=tmp_path,
               env=slurm_cluster)
    assert done.returncode == 0, done.stderr
    job_id = submitted_id(done.stderr)
    summaries = [line for line in done.stderr.splitlines() if line.startswith("job/")]
    assert [line.split(":")[0] for line in summaries] == ["job/example_basics.json", "job/short.json"]
    expected = [f"{job_id}_0", f"{job_id}_1"]
    deadline = time.monotonic() + 300  # slurmdbd records the tasks a little after slurmctld ran them
    while (tasks := subprocess.run(["sacct", "-n", "-X", "-j", job_id, "-o", "JobID%20"], env=slurm_cluster,
                                   capture_output=True, text=True, timeout=60).stdout.split()) != expected:
        assert time.monotonic() < deadline, tasks
        time.sleep(0.5)
    record = json.loads((tmp_path / "var" / "jobs" / f"{job_id}.job.json").read_text())
    assert record["tasks"] == [f"{job_id}_0", f"{job_id}_1"]
    for name in ("example_basics", "short"):
        plain = traced_plainly(tmp_path / f"{name}.py", tmp_path, slurm_cluster)
        assert comparable(tmp_path / "job" / f"{name}.json") == comparable(plain)


def test_the_distributed_example_records_every_rank(slurm_cluster, tmp_path):
    lecture = tmp_path / "example_distributed.py"
    shutil.copy(LECTURES / lecture.name, lecture)
    done = cli("trace", lecture.name, "-o", "job", "--executor", "slurm", cwd=tmp_path, env=slurm_cluster)
    assert done.returncode == 0, done.stderr
    job = comparable(tmp_path / "job" / "example_distributed.json")
    assert [(rank["rank"], rank["status"]) for rank in job["ranks"]] == [(0, "ok"), (1, "ok")]
    assert job == comparable(traced_plainly(lecture, tmp_path, slurm_cluster))


def test_a_failing_lecture_fails_as_in_a_plain_run(slurm_cluster, tmp_path):
    (tmp_path / "failing.py").write_text(FAILING)
    done = cli("trace", "failing.py", "-o", "job", "--executor", "slurm", cwd=tmp_path, env=slurm_cluster)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("job/failing.json: error, ")
    assert last.endswith("ValueError: broken on purpose (failing.py:3)")
    plain = cli("trace", "failing.py", "-o", "plain", cwd=tmp_path, env=slurm_cluster)
    assert plain.returncode == 1, plain.stderr
    assert comparable(tmp_path / "job" / "failing.json") == comparable(tmp_path / "plain" / "failing.json")


def accounted_state(job_id: str, env: dict[str, str]) -> str:
    """The job's state as sacct has it ("" before slurmdbd has the job); "CANCELLED by UID" is cut
    to its first word by the column."""
    listed = subprocess.run(["sacct", "-n", "-X", "-j", job_id, "-o", "State"], env=env, capture_output=True,
                            text=True, timeout=60).stdout.split()
    return listed[0] if listed else ""


def test_ctrl_c_cancels_the_job_and_it_leaves_the_queue(slurm_cluster, tmp_path):
    env = {**slurm_cluster, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    job_id = cancel_with_ctrl_c("slurm", tmp_path, env, running=lambda job: assert_in_queue(job, slurm_cluster))
    # Each wait is for the event itself; the limits only guard against a hang. slurmctld drops a
    # cancelled job once its processes are gone (SIGTERM, then SIGKILL after KillWait), and
    # slurmdbd records the end after slurmctld, so sacct may still say RUNNING for a while.
    deadline = time.monotonic() + 300
    while in_queue(job_id, slurm_cluster):
        assert time.monotonic() < deadline, f"job {job_id} still in squeue five minutes after scancel"
        time.sleep(0.5)
    while (state := accounted_state(job_id, slurm_cluster)) in ("", "PENDING", "RUNNING", "REQUEUED", "SUSPENDED"):
        assert time.monotonic() < deadline, f"job {job_id} still {state or 'unknown'} in sacct five minutes after scancel"
        time.sleep(0.5)
    assert state.startswith("CANCELLED"), state


def test_sbatch_without_a_controller_is_one_line(slurm_cluster, tmp_path):
    """The cluster's own config with the controller's port changed to one nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    conf = Path(slurm_cluster["SLURM_CONF"]).read_text()
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "slurm.conf").write_text(re.sub(r"SlurmctldPort=\d+", f"SlurmctldPort={closed_port}", conf))
    shutil.copy(LECTURES / "example_basics.py", tmp_path / "example_basics.py")
    done = cli("trace", "example_basics.py", "--executor", "slurm", cwd=tmp_path,
               env={**slurm_cluster, "SLURM_CONF": str(tmp_path / "etc" / "slurm.conf")})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "cs336-lectures: error: sbatch could not submit the job: sbatch: error: Batch job submission failed: Unable "
        "to contact slurm controller (connect failure) (check that the cluster's controller is up and reachable "
        "from here: `scontrol ping`, and SLURM_CONF or /etc/slurm/slurm.conf)"]


def test_a_job_at_its_time_limit_keeps_its_trace_and_is_fetched_by_jobs(at_time_limit, slurm_cluster):
    """The trace stops itself before Slurm ends the job, as under --timeout, and says why."""
    folder, job_id = at_time_limit
    fetched = cli("jobs", job_id, cwd=folder, env=slurm_cluster)
    assert fetched.returncode == 1, fetched.stderr
    last = fetched.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"out/slow\.json: timeout, \d+ steps in [\d.]+ s: stopped after [\d.]+ s \(the limit set by "
                        r"the job's time limit, \d+ s from the start of this trace\), at step \d+", last), last
    trace = json.loads((folder / "out" / "slow.json").read_text())
    assert trace["header"]["status"] == "timeout"
    assert len(trace["steps"]) > 20  # a step a second, for most of the minute
