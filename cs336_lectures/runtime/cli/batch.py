"""Tracing as a batch job: `cs336-lectures trace --executor slurm|local` through submitit.

The same call a plain `trace` makes (trace_lecture, one per file) is pickled by submitit and run
in a job: on a Slurm cluster (`--executor slurm`, through sbatch) or in a separate local process
(`--executor local`, submitit's local executor, which is how the tests run it). The job writes the
trace where a local run would, so Slurm needs a filesystem shared between the login node and the
compute nodes (clusters have one). While it waits, the command shows the job id, its state and the
steps the job reports (a small progress file in the job's folder); Ctrl-C asks whether to cancel
the job (only on a terminal: without one nothing is asked and the job goes on); `--detach`
returns at once, and `cs336-lectures jobs` lists and fetches detached jobs.

Cluster settings (partition, account, qos, gpus, time, setup lines, other sbatch options) come
from `cs336-lectures.yaml` in the user's config folder, then one beside the lectures, then the
command line, each overriding the one before (README, "Tracing on a Slurm cluster").
"""

from __future__ import annotations

import argparse
import dataclasses
import contextlib
import datetime
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from cs336_lectures.atomic import write_bytes_atomically
from cs336_lectures.runtime.safe_yaml import YamlFileError, load_yaml_file
from cs336_lectures.runtime.terminal_text import print_visible, visible

CONFIG_NAME = "cs336-lectures.yaml"
JOBS_FOLDER = Path("var/jobs")
PROGRESS_SUFFIX = "_progress.json"  # beside submitit's own files of the job: <job id>_progress.json
POLL_S = 1.0
CANCEL_WAIT_S = 10.0  # how long a cancel waits for the job to be gone before saying it is
JOB_END_MARGIN_S = 60.0  # a trace stops this long (at most a tenth of the job) before Slurm ends the job
DEFAULT_TIME_MIN = 60  # submitit's own default (5 minutes) is shorter than most lectures on a busy queue
# Settings a config file may hold, with the type each must have.
SETTINGS: dict[str, type | tuple[type, ...]] = {
    "partition": str, "account": str, "qos": str, "gpus": int, "cpus": int, "mem_gb": int, "time": int,
    "setup": list, "args": dict, "jobs_folder": str,
}


class ExecutorError(Exception):
    """The job could not be submitted or followed (one line for the user)."""


# --- configuration ----------------------------------------------------------------------------


def user_config_path() -> Path:
    """The user's config file: $XDG_CONFIG_HOME (or ~/.config)/cs336-lectures/cs336-lectures.yaml."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cs336-lectures" / CONFIG_NAME


def read_config(path: Path) -> dict[str, Any]:
    """The settings in one YAML file ({} when it does not exist); ExecutorError names a bad key or value."""
    if not path.is_file():
        return {}
    try:
        data = load_yaml_file(path)
    except YamlFileError as error:
        raise ExecutorError(f"{path}: cannot read the configuration: {error.reason}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ExecutorError(f"{path}: the configuration must be a mapping of settings, not {type(data).__name__}")
    for key, value in data.items():
        expected = SETTINGS.get(key)
        if expected is None:
            raise ExecutorError(f"{path}: unknown setting {key!r} (known: {', '.join(SETTINGS)})")
        if not isinstance(value, expected) or isinstance(value, bool):
            raise ExecutorError(f"{path}: setting {key!r} must be a {expected.__name__}, not {value!r}")
    if not all(isinstance(line, str) for line in data.get("setup", [])):
        raise ExecutorError(f"{path}: setting 'setup' must be a list of shell lines")
    return data


def merged_settings(lectures: list[Path], overrides: dict[str, Any], user_config: Path | None = None) -> dict[str, Any]:
    """The user's config, then the one beside the first lecture, then `overrides` (the command
    line; None means not given). `args` (other sbatch options) merge key by key."""
    layers = [read_config(user_config or user_config_path())]
    if lectures:
        layers.append(read_config(lectures[0].resolve().parent / CONFIG_NAME))
    layers.append({key: value for key, value in overrides.items() if value is not None})
    settings: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            settings[key] = {**settings.get(key, {}), **value} if key == "args" else value
    return settings


# --- the command line --------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `cs336-lectures trace` that send it to a job."""
    group = parser.add_argument_group("running as a job (submitit)")
    group.add_argument("--executor", choices=("slurm", "local"),
                       help="run the trace as a Slurm job (needs sbatch and a shared filesystem), or as a separate "
                            "local process through the same machinery; default: here, in this process")
    group.add_argument("--partition", help="Slurm partition")
    group.add_argument("--gpus", type=int, metavar="N", help="GPUs per node")
    group.add_argument("--time", type=int, metavar="MIN", help=f"time limit in minutes (default {DEFAULT_TIME_MIN})")
    group.add_argument("--slurm-arg", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option (e.g. constraint=h100); repeatable")
    group.add_argument("--detach", action="store_true",
                       help="return once submitted; `cs336-lectures jobs` lists and fetches the job")


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    extra = {}
    for item in args.slurm_arg:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ExecutorError(f"--slurm-arg {item!r}: expected KEY=VALUE")
        extra[key.strip()] = value
    return {"partition": args.partition, "gpus": args.gpus, "time": args.time, "args": extra or None}


def run(args: argparse.Namespace, argv: list[str], prog: str) -> int:
    """`trace --executor ...`: submit, then wait (or return with --detach); the exit status."""
    try:
        settings = merged_settings([Path(file) for file in args.files], overrides_from(args))
        job, record = submit(args, settings, command=(prog, *argv))
    except ExecutorError as error:
        print_visible(f"{prog}: error: {error}")
        return 2
    print_visible(f"{prog}: submitted job {job.job_id} ({args.executor}) tracing {', '.join(args.files)}")
    if args.detach:
        print_visible(f"{prog}: `{prog} jobs {job.job_id}` fetches it once done")
        return 0
    return follow(job, record, prog, ask_on_terminal, quiet=args.quiet)


def submit(args: argparse.Namespace, settings: dict[str, Any], command: tuple[str, ...]) -> tuple[Any, dict]:
    """Submit one job tracing every file of `args`; returns the submitit job and its record."""
    missing = [tool for tool in ("sbatch", "srun") if shutil.which(tool) is None] if args.executor == "slurm" else []
    if missing:
        raise ExecutorError(f"--executor slurm needs Slurm's `sbatch` and `srun` on PATH, and {' and '.join(missing)} "
                            f"{'is' if len(missing) == 1 else 'are'} missing here (run it on the cluster's login node, "
                            f"or use --executor local)")
    import submitit

    folder = Path(settings.get("jobs_folder", JOBS_FOLDER)).absolute()
    folder.mkdir(parents=True, exist_ok=True)
    executor = submitit.AutoExecutor(folder=folder, cluster=args.executor)
    parameters: dict[str, Any] = {"timeout_min": settings.get("time", DEFAULT_TIME_MIN), "name": "cs336-lectures"}
    if args.executor == "slurm":
        for key, name in (("partition", "slurm_partition"), ("account", "slurm_account"), ("qos", "slurm_qos"),
                          ("gpus", "gpus_per_node"), ("cpus", "cpus_per_task"), ("mem_gb", "mem_gb"),
                          ("setup", "slurm_setup"), ("args", "slurm_additional_parameters")):
            if key in settings:
                parameters[name] = settings[key]
    else:
        parameters["local_setup"] = [*settings.get("setup", []), _same_gpus()]
    try:
        executor.update_parameters(**parameters)
    except (ValueError, TypeError) as error:
        raise ExecutorError(f"bad job settings: {error}") from None
    requests = [trace_request(args, file, command) for file in args.files]
    # On Slurm, several lectures are an array, one task each, which the cluster may run side by side.
    job = _submitted(executor, requests, array=args.executor == "slurm" and len(requests) > 1)
    record = {"job_id": str(job.job_id), "executor": args.executor, "folder": str(folder),
              "files": list(args.files), "output": str(Path(args.output).absolute()),
              "submitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    if isinstance(job, JobArray):
        record["tasks"] = [task.job_id for task in job.tasks]
    write_bytes_atomically(folder / f"{job.job_id}.job.json", json.dumps(record, indent=1).encode())
    return job, record


def _submitted(executor: Any, requests: list[dict[str, Any]], array: bool) -> Any:
    """The job tracing `requests` (a JobArray of one task per request when `array`); ExecutorError
    with sbatch's own reason when it refused.

    submitit prints sbatch's whole stderr before raising; it is kept here instead, so that the
    user sees one line: sbatch says several (DNS lookups, retries) before the one that matters."""
    import submitit

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            if not array:
                return executor.submit(run_job, requests)
            return JobArray(executor.map_array(run_job, [[request] for request in requests]))
    except submitit.core.utils.FailedJobError as error:
        lines = [line.strip() for line in (str(error) or said.getvalue()).splitlines() if line.strip()]
        reason = next((line for line in lines if "fatal:" in line),
                      next((line for line in lines if "error:" in line), lines[0] if lines else "no reason given"))
        raise ExecutorError(f"sbatch could not submit the job: {reason} (check that the cluster's controller is up "
                            f"and reachable from here: `scontrol ping`, and SLURM_CONF or /etc/slurm/slurm.conf)"
                            ) from None


def _same_gpus() -> str:
    """A setup line giving a local job the GPUs this process sees. submitit's local executor sets
    CUDA_VISIBLE_DEVICES to the first `gpus_per_node` indices (none by default), which would hide
    the GPUs a plain trace uses, or pick others; the setup line runs after that, in the job's shell."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "unset CUDA_VISIBLE_DEVICES" if visible is None else f"export CUDA_VISIBLE_DEVICES={shlex.quote(visible)}"


def trace_request(args: argparse.Namespace, file: str, command: tuple[str, ...]) -> dict[str, Any]:
    """What the job needs to make the same trace_lecture call a plain `trace` makes here."""
    from cs336_lectures.runtime.tracing.lecture_run import TraceSettings

    return {"cwd": os.getcwd(), "file": file, "output": args.output,
            "settings": TraceSettings.from_options(args, command).to_dict()}


def run_job(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The job: trace each lecture; one result per file ({"error": line} when it could not start)."""
    from cs336_lectures.runtime.tracing.lecture_run import TraceSettings, trace_lecture
    from cs336_lectures.runtime.tracing.result import LectureError

    progress = _progress_writer()
    _ignore_submitit_requeue()
    results = []
    for request in requests:
        os.chdir(request["cwd"])  # paths in the trace are shown relative to it, as in a plain run
        progress(0, 0.0)  # the tracer reports every few thousand steps: say at once that it began
        settings = TraceSettings.from_dict(request["settings"])
        timeout, timeout_source = settings.timeout, "--timeout"
        left = _time_left_s()
        if left is not None:
            job_limit = left - min(JOB_END_MARGIN_S, left * 0.1)
            if timeout is None or job_limit < timeout:
                timeout, timeout_source = job_limit, f"the job's time limit, {left:.0f} s from the start of this trace"
        try:
            result = trace_lecture(Path(request["file"]), output_dir=Path(request["output"]), quiet=True,
                                   timeout_source=timeout_source, report_progress=progress,
                                   **dataclasses.replace(settings, timeout=timeout).arguments())
        except LectureError as error:
            results.append({"error": str(error)})
            continue
        results.append(result.to_dict())
    return results


def _ignore_submitit_requeue() -> None:
    """submitit asks Slurm for a signal 90 s before the time limit and, on it, raises in the
    running code and requeues the job: the lecture would fail at whatever line it was on, and then
    run again. A trace stops itself before the limit instead (run_job), as under --timeout."""
    import submitit

    signal.signal(getattr(signal, f"SIG{submitit.JobEnvironment.USR_SIG}"), signal.SIG_IGN)


def _time_left_s() -> float | None:
    """Seconds until Slurm ends this job (squeue's TIME_LEFT), None outside Slurm or without a limit."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if job_id is None:
        return None
    try:
        left = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%L"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return _slurm_duration_s(left)


def _slurm_duration_s(text: str) -> float | None:
    """Slurm's [days-][hours:]minutes:seconds as seconds; None for UNLIMITED, INVALID or anything else."""
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not (days == "" or days.isdigit()) or not all(part.isdigit() for part in parts) or not 1 <= len(parts) <= 3:
        return None
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return float(seconds + int(days or 0) * 86400)


def _progress_writer() -> Callable[..., None]:
    """Steps so far, written now and then to the job's folder for the waiting command to show."""
    import submitit

    environment = submitit.JobEnvironment()
    path = Path(environment.paths.folder) / f"{environment.job_id}{PROGRESS_SUFFIX}"

    def report(steps: int, elapsed: float, phase: str = "tracing") -> None:
        data = json.dumps({"steps": steps, "elapsed_s": round(elapsed, 1), "phase": phase}).encode()
        write_bytes_atomically(path, data)

    return report


# --- following a job ---------------------------------------------------------------------------


class JobArray:
    """The tasks of one Slurm array (one lecture each), followed as one job: its id is the array's."""

    def __init__(self, tasks: list[Any]):
        self.tasks = tasks
        self.job_id = str(tasks[0].job_id).split("_")[0]
        self.paths = tasks[0].paths

    @property
    def state(self) -> str:
        states = [task.state for task in self.tasks]
        if len(set(states)) == 1:
            return states[0]
        return ", ".join(f"{states.count(state)} {state}" for state in dict.fromkeys(states))

    def done(self) -> bool:
        return all(task.done() for task in self.tasks)

    def cancel(self) -> None:
        subprocess.run(["scancel", self.job_id], check=True)  # the whole array


def _tasks(job: Any) -> list[Any]:
    return job.tasks if isinstance(job, JobArray) else [job]



def ask_on_terminal(question: str) -> bool | None:
    """Ask a yes/no question on the terminal; None when there is none to ask on."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    try:
        answer = input(question)
    except (EOFError, KeyboardInterrupt):
        return None
    return answer.strip().lower() in ("y", "yes")


def follow(job: Any, record: dict, prog: str, ask: Callable[[str], bool | None],
           quiet: bool = False) -> int:
    """Wait for the job, showing its state; print one summary line per lecture; the exit status."""
    shown = None
    try:
        while not job.done():
            progress = _progress(record)
            state = job.state
            if progress and state in ("UNKNOWN", "PENDING"):
                state = "RUNNING"  # the job's own progress file is fresher than sacct, which lags a few seconds
            elif state == "UNKNOWN":  # what submitit says until sacct lists the job, a few seconds after sbatch
                state = "submitted, not yet listed by sacct"
            line = f"job {job.job_id}: {state}{progress}"
            if line != shown and not quiet:
                print(visible(f"{prog}: {line}"), file=sys.stderr, flush=True)
                shown = line
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        answer = ask(f"\nCancel job {job.job_id}? [y/N] ")
        if answer:
            job.cancel()
            deadline = time.monotonic() + CANCEL_WAIT_S  # a local job stops within a second or two
            while not job.done() and time.monotonic() < deadline:
                time.sleep(POLL_S / 5)
            print_visible(f"{prog}: cancelled job {job.job_id}")
        else:
            print_visible(f"{prog}: job {job.job_id} goes on; `{prog} jobs {job.job_id}` fetches it")
        return 130
    return report(job, prog)


def _progress(record: dict) -> str:
    """What the job's tasks last reported: ", tracing, 120 steps, 3.1 s" (per task of an array)."""
    tasks = record.get("tasks", [record["job_id"]])
    shown = []
    for task in tasks:
        try:
            progress = json.loads((Path(record["folder"]) / f"{task}{PROGRESS_SUFFIX}").read_text())
        except (OSError, ValueError):
            continue
        label = f" (task {task.split('_')[-1]})" if len(tasks) > 1 else ""
        shown.append(f", {progress['phase']}{label}, {progress['steps']} steps, {progress['elapsed_s']} s")
    return "".join(shown)


def report(job: Any, prog: str) -> int:
    """The results of a finished job as a plain `trace` prints them; the exit status."""
    from cs336_lectures.runtime.tracing.result import TraceResult

    status = 0
    results = []
    for task in _tasks(job):
        try:
            results += task.result()
        except Exception as error:  # submitit's FailedJobError / UncompletedJobError carry the job's own log
            first = str(error).strip().splitlines()
            print_visible(f"{prog}: error: job {task.job_id} failed: {first[0] if first else type(error).__name__} "
                          f"(logs in {job.paths.folder})")
            status = 1
    for result in results:
        if "error" in result:
            print_visible(f"{prog}: error: {result['error']}")
            status = 2
            continue
        print_visible(TraceResult.from_dict(result).summary())
        if result["status"] != "ok":
            status = max(status, 1)
    return status
