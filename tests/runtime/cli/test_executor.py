"""`trace --executor local|slurm` through submitit, its configuration, and `cs336-lectures jobs`
(cs336_lectures/runtime/cli/batch.py, jobs.py). There is no Slurm here: the local executor runs
the same pickled call in a separate process, and the Slurm path is checked up to sbatch."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pexpect
import pytest

from cs336_lectures.runtime.cli.batch import ExecutorError, follow, merged_settings

ROOT = Path(__file__).resolve().parents[3]
LECTURE = ROOT / "lectures" / "example_basics.py"
pytestmark = pytest.mark.slow


def cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(cwd / "config"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "cs336_lectures", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def comparable(path: Path) -> dict:
    """A trace minus what differs between any two runs (time) and the command that asked for it."""
    trace = json.loads(path.read_text())
    for key in ("created", "elapsed_s", "command"):
        trace["header"].pop(key)
    return trace


def test_the_local_executor_writes_the_trace_a_plain_run_writes(tmp_path):
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    plain = cli("trace", "example_basics.py", "-o", "plain", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    job = cli("trace", "example_basics.py", "-o", "job", "--executor", "local", cwd=tmp_path)
    assert job.returncode == 0, job.stderr
    assert "submitted job" in job.stderr and "job/example_basics.json: ok, " in job.stderr
    assert comparable(tmp_path / "job" / "example_basics.json") == comparable(tmp_path / "plain" / "example_basics.json")
    assert json.loads((tmp_path / "job" / "example_basics.json").read_text())["header"]["command"][-2:] == ["--executor", "local"]


def test_a_failing_lecture_under_the_local_executor_exits_1_like_a_plain_trace(tmp_path):
    (tmp_path / "broken.py").write_text('x = 1  # @inspect x\nraise RuntimeError("broken on purpose")\n')
    plain = cli("trace", "broken.py", "-o", "plain", cwd=tmp_path)
    job = cli("trace", "broken.py", "-o", "job", "--executor", "local", cwd=tmp_path)
    assert plain.returncode == job.returncode == 1, (plain.stderr, job.stderr)
    assert "job/broken.json: error" in job.stderr and "broken on purpose" in job.stderr, job.stderr
    assert comparable(tmp_path / "job" / "broken.json")["steps"] == comparable(tmp_path / "plain" / "broken.json")["steps"]


def test_slurm_without_sbatch_fails_with_one_line(tmp_path):
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    done = cli("trace", "example_basics.py", "--executor", "slurm", "--partition", "gpu", cwd=tmp_path,
               env={"PATH": str(Path(sys.executable).parent)})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "cs336-lectures: error: --executor slurm needs Slurm's `sbatch` and `srun` on PATH, and sbatch and srun "
        "are missing here (run it on the cluster's login node, or use --executor local)"]
    assert not (tmp_path / "var" / "jobs").exists()


def test_settings_merge_user_config_then_the_lectures_folder_then_the_command_line(tmp_path):
    user = tmp_path / "user.yaml"
    user.write_text("partition: cpu\naccount: course\ntime: 30\nargs: {constraint: a100, exclusive: ''}\n"
                    "setup: [source ~/venv/bin/activate]\n")
    lectures = tmp_path / "lectures"
    lectures.mkdir()
    (lectures / "cs336-lectures.yaml").write_text("partition: gpu\ngpus: 1\nargs: {constraint: h100}\n")
    settings = merged_settings([lectures / "lecture_02.py"], {"partition": None, "gpus": 8, "time": None,
                                                             "args": {"mail-type": "END"}}, user_config=user)
    assert settings == {"partition": "gpu", "account": "course", "time": 30, "gpus": 8,
                        "args": {"constraint": "h100", "exclusive": "", "mail-type": "END"},
                        "setup": ["source ~/venv/bin/activate"]}


@pytest.mark.parametrize("text, message", [
    ("partition: gpu\ncolour: blue\n", "unknown setting 'colour'"),
    ("gpus: many\n", "setting 'gpus' must be a int, not 'many'"),
    ("- partition\n", "must be a mapping of settings"),
    ("partition: [\n", "cannot read the configuration"),
])
def test_a_bad_config_is_one_clear_line(tmp_path, text, message):
    (tmp_path / "cs336-lectures.yaml").write_text(text)
    with pytest.raises(ExecutorError, match=message.replace("[", r"\[")):
        merged_settings([tmp_path / "lecture.py"], {}, user_config=tmp_path / "absent.yaml")
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    done = cli("trace", "example_basics.py", "--executor", "local", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_a_detached_job_is_listed_and_fetched(tmp_path):
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    done = cli("trace", "example_basics.py", "-o", "out", "--executor", "local", "--detach", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    job_id = done.stderr.split("submitted job ")[1].split()[0]
    fetched = cli("jobs", job_id, cwd=tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    assert "out/example_basics.json: ok, 57 steps" in fetched.stderr
    listed = cli("jobs", cwd=tmp_path)
    assert listed.stdout.split("\t")[:4] == [job_id, "local", "FINISHED", "example_basics.py"]
    assert cli("jobs", "999999999", cwd=tmp_path).stderr.startswith("cs336-lectures: error: no job 999999999 in ")


def test_job_records_that_are_not_ours_are_passed_over(tmp_path):
    jobs = tmp_path / "var" / "jobs"
    jobs.mkdir(parents=True)
    for name, text in (("list", "[1, 2]"), ("partial", '{"job_id": "7"}'), ("cut", '{"job_id": '),
                       ("deep", "[" * 20_000 + "]" * 20_000), ("digits", '{"job_id": ' + "9" * 5_000 + "}")):
        (jobs / f"{name}.job.json").write_text(text)
    listed = cli("jobs", cwd=tmp_path)
    assert (listed.returncode, listed.stdout) == (0, "") and listed.stderr == "no jobs in var/jobs\n"
    missing = cli("jobs", "7", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr == "cs336-lectures: error: no job 7 in var/jobs\n"


SLOW = '''import time


def main():
    for second in range(600):  # @inspect second
        time.sleep(1)
'''


def cancel_with_ctrl_c(executor: str, folder: Path, env: dict, running: Callable[[str], None] = lambda job: None) -> str:
    """Trace SLOW as a job on a terminal; once it runs (then `running(job_id)`), press Ctrl-C and
    answer yes to cancelling. The job's id, once the command ended with 130."""
    (folder / "slow.py").write_text(SLOW)
    # Started as a shell starts a command in a terminal: SIGINT at its default. A test run started
    # in the background (`make test &`) ignores SIGINT, and the command would inherit that.
    child = pexpect.spawn(sys.executable, ["-m", "cs336_lectures", "trace", "slow.py", "--executor", executor],
                          cwd=str(folder), env=env, encoding="utf-8", timeout=180,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child.expect(r"job (\d+): RUNNING, tracing")
    job_id = child.match.group(1)
    running(job_id)
    child.sendintr()
    child.expect(rf"Cancel job {job_id}\? \[y/N\] ")
    child.sendline("y")
    child.expect(f"cancelled job {job_id}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    return job_id


def test_ctrl_c_on_a_terminal_asks_and_cancels(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    job_id = cancel_with_ctrl_c("local", tmp_path, env)
    listed = subprocess.run([sys.executable, "-m", "cs336_lectures", "jobs"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.stdout.split("\t")[:3] != [job_id, "local", "RUNNING"]


class _InterruptedWait:
    """A job whose wait is interrupted by Ctrl-C at once, and which records a cancel."""

    job_id = "7"
    state = "RUNNING"
    cancelled = False

    def done(self) -> bool:
        if not self.cancelled:
            raise KeyboardInterrupt
        return True

    def cancel(self) -> None:
        self.cancelled = True


@pytest.mark.parametrize("answer, cancelled, said", [(True, True, "cancelled job 7"), (False, False, "job 7 goes on"),
                                                     (None, False, "job 7 goes on")])
def test_ctrl_c_cancels_only_when_the_answer_is_yes(capsys, tmp_path, answer, cancelled, said):
    job = _InterruptedWait()
    asked = []
    status = follow(job, {"job_id": "7", "folder": str(tmp_path)}, "cs336-lectures",
                    lambda question: asked.append(question) or answer)
    assert status == 130 and job.cancelled is cancelled and asked == ["\nCancel job 7? [y/N] "]
    assert said in capsys.readouterr().err


def test_without_a_terminal_nothing_is_asked(monkeypatch):
    from cs336_lectures.runtime.cli import batch as executor
    monkeypatch.setattr("builtins.input", lambda question: pytest.fail("asked without a terminal"))
    assert executor.ask_on_terminal("Cancel job 7? [y/N] ") is None  # pytest's stdin is no terminal


FAKE_SBATCH = '''#!/bin/sh
# Stands in for Slurm's sbatch: keeps the batch script it was given and answers as sbatch does.
cp "$1" "$SBATCH_SCRIPT_COPY"
echo "Submitted batch job 4242"
'''


def test_slurm_settings_reach_the_batch_script(tmp_path):
    """No cluster here: a stand-in sbatch keeps the script submitit wrote, which must carry the
    settings of both config files and the command line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 1\n")  # only looked for at submission
    for tool in ("sbatch", "srun"):
        (bin_dir / tool).chmod(0o755)
    (tmp_path / "config" / "cs336-lectures").mkdir(parents=True)
    (tmp_path / "config" / "cs336-lectures" / "cs336-lectures.yaml").write_text(
        "account: cs336\npartition: cpu\nsetup: [source /shared/venv/bin/activate]\n")
    (tmp_path / "cs336-lectures.yaml").write_text("qos: high\nargs: {constraint: a100}\n")
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    script = tmp_path / "script.sh"
    done = cli("trace", "example_basics.py", "--executor", "slurm", "--partition", "gpu", "--gpus", "2", "--time", "30",
               "--slurm-arg", "constraint=h100", "--detach", cwd=tmp_path,
               env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "SBATCH_SCRIPT_COPY": str(script)})
    assert done.returncode == 0, done.stderr
    assert "submitted job 4242 (slurm)" in done.stderr
    lines = script.read_text().splitlines()
    for expected in ("#SBATCH --partition=gpu", "#SBATCH --account=cs336", "#SBATCH --qos=high",
                     "#SBATCH --gpus-per-node=2", "#SBATCH --time=30", "#SBATCH --constraint=h100",
                     "source /shared/venv/bin/activate"):
        assert expected in lines, (expected, lines)
    record = json.loads((tmp_path / "var" / "jobs" / "4242.job.json").read_text())
    assert (record["executor"], record["files"]) == ("slurm", ["example_basics.py"])


GPUS = '''import os


def main():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")  # @inspect visible
'''


@pytest.mark.parametrize("visible", [None, "GPU-5b1e 0a, 1", ""])
def test_a_local_job_sees_the_gpus_this_process_sees(tmp_path, visible):
    """submitit's local executor would set CUDA_VISIBLE_DEVICES to "" (no GPU) on its own."""
    (tmp_path / "gpus.py").write_text(GPUS)
    env = {key: value for key, value in os.environ.items() if key != "CUDA_VISIBLE_DEVICES"}
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    done = subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", "gpus.py", "--executor", "local", "-o", "out"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert done.returncode == 0, done.stderr
    from cs336_lectures import load_trace

    assert load_trace(tmp_path / "out" / "gpus.json").values_of("visible") == [visible]


NO_CONFIG_SBATCH = '''#!/bin/sh
# What Slurm's sbatch says on a machine with its tools but no slurm.conf and no controller.
echo "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host" >&2
echo "sbatch: error: fetch_config: DNS SRV lookup failed" >&2
echo "sbatch: error: _establish_config_source: failed to fetch config" >&2
echo "sbatch: fatal: Could not establish a configuration source" >&2
exit 1
'''


def test_sbatch_without_a_controller_is_one_line(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(NO_CONFIG_SBATCH)
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 1\n")
    for tool in ("sbatch", "srun"):
        (bin_dir / tool).chmod(0o755)
    shutil.copy(LECTURE, tmp_path / "example_basics.py")
    done = cli("trace", "example_basics.py", "--executor", "slurm", cwd=tmp_path,
               env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "cs336-lectures: error: sbatch could not submit the job: sbatch: fatal: Could not establish a configuration "
        "source (check that the cluster's controller is up and reachable from here: `scontrol ping`, and SLURM_CONF "
        "or /etc/slurm/slurm.conf)"]


@pytest.mark.parametrize("left, seconds", [("0:45", 45), ("59:59", 3599), ("1:00:00", 3600), ("2-03:04:05", 183845),
                                           ("UNLIMITED", None), ("INVALID", None), ("", None), ("1-x", None)])
def test_a_jobs_time_left_as_squeue_writes_it(left, seconds):
    from cs336_lectures.runtime.cli.batch import _slurm_duration_s

    assert _slurm_duration_s(left) == seconds


class _Task:
    """A finished task of an array: its result, or the error submitit raises for it."""

    def __init__(self, job_id: str, state: str, result: list | Exception):
        self.job_id, self.state, self._result = job_id, state, result
        self.paths = type("Paths", (), {"folder": Path("var/jobs")})()

    def done(self) -> bool:
        return self.state != "RUNNING"

    def result(self) -> list:
        if isinstance(self._result, Exception):
            raise self._result
        return self._result


def test_an_array_reports_every_task_even_after_a_failed_one(capsys, tmp_path):
    from cs336_lectures.runtime.cli.batch import JobArray, report

    ok = {"path": str(tmp_path / "b.json"), "status": "ok", "num_steps": 3, "elapsed_s": 0.1, "message": None}
    array = JobArray([_Task("41_0", "FAILED", RuntimeError("node died\nmore")), _Task("41_1", "COMPLETED", [ok])])
    assert array.job_id == "41" and array.state == "1 FAILED, 1 COMPLETED" and array.done()
    assert report(array, "cs336-lectures") == 1
    assert capsys.readouterr().err.splitlines() == [
        "cs336-lectures: error: job 41_0 failed: node died (logs in var/jobs)",
        f"{tmp_path / 'b.json'}: ok, 3 steps in 0.1 s"]
