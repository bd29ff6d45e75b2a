"""`cs336-lectures jobs`: the trace jobs submitted with `trace --executor ...` (detached or not).

    $ cs336-lectures jobs              # one line per job: id, executor, state, lectures, when
    $ cs336-lectures jobs 41234        # wait for that job and report its traces, as `trace` would
    $ cs336-lectures jobs 41234 --cancel

A job is found by the record `trace` left in the jobs folder (var/jobs, or `jobs_folder` in
cs336-lectures.yaml); its state comes from Slurm (sacct, through submitit) or, for a local job,
from whether its process still runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cs336_lectures.runtime.cli.batch import (
    JOBS_FOLDER, ExecutorError, JobArray, ask_on_terminal, follow, merged_settings,
)
from cs336_lectures.runtime.terminal_text import print_visible

PROG = "cs336-lectures"
RECORD_KEYS = {"job_id", "executor", "folder", "files", "output", "submitted"}  # what batch.submit writes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("job", nargs="?", metavar="JOB_ID", help="wait for this job and report its traces")
    parser.add_argument("--cancel", action="store_true", help="cancel JOB_ID instead of waiting for it")
    parser.add_argument("--folder", metavar="DIR",
                        help=f"the jobs folder (default: jobs_folder from cs336-lectures.yaml, else {JOBS_FOLDER})")


def run(args: argparse.Namespace) -> int:
    try:
        folder = Path(args.folder or merged_settings([], {}).get("jobs_folder", JOBS_FOLDER))
    except ExecutorError as error:
        print_visible(f"{PROG}: error: {error}")
        return 2
    records = _records(folder)
    if args.job is None:
        if not records:
            print_visible(f"no jobs in {folder}")
        for record in records.values():
            print_visible(f"{record['job_id']}\t{record['executor']}\t{_job(record).state}\t{' '.join(record['files'])}"
                          f"\t{record['submitted']}", sys.stdout)
        return 0
    record = records.get(args.job)
    if record is None:
        print_visible(f"{PROG}: error: no job {args.job} in {folder}")
        return 2
    job = _job(record)
    if args.cancel:
        job.cancel()
        print_visible(f"{PROG}: cancelled job {args.job}")
        return 0
    if record["executor"] == "local" and job.state == "LOST":
        print_visible(f"{PROG}: error: job {args.job} ended without a result (logs in {record['folder']})")
        return 1
    return follow(job, record, PROG, ask_on_terminal)


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    records = {}
    for path in sorted(folder.glob("*.job.json"), key=lambda p: p.stat().st_mtime):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError):
            continue  # a record being written, or not ours
        if isinstance(record, dict) and RECORD_KEYS <= record.keys() and isinstance(record["job_id"], str):
            records[record["job_id"]] = record
    return records


def _job(record: dict) -> Any:
    import submitit

    folder = Path(record["folder"])
    if record["executor"] == "slurm" and "tasks" in record:
        return JobArray([submitit.SlurmJob(folder=folder, job_id=task) for task in record["tasks"]])
    if record["executor"] == "slurm":
        return submitit.SlurmJob(folder=folder, job_id=record["job_id"])
    return _LocalJob(folder, record["job_id"])


class _LocalJob:
    """A local job seen from another process: submitit's LocalJob only knows processes it started,
    so the state here comes from the job's process id (the local executor's job id)."""

    def __init__(self, folder: Path, job_id: str):
        import submitit

        self._job = submitit.LocalJob(folder=folder, job_id=job_id)
        self.job_id = job_id
        self.paths = self._job.paths

    def _alive(self) -> bool:
        try:
            os.kill(int(self.job_id), 0)
        except (OSError, ValueError):
            return False
        return True

    @property
    def state(self) -> str:
        if self.paths.result_pickle.exists():
            return "FINISHED"
        return "RUNNING" if self._alive() else "LOST"

    def done(self) -> bool:
        return self.state != "RUNNING"

    def result(self) -> Any:
        return self._job.result()

    def cancel(self) -> None:
        import signal

        if self._alive():
            os.kill(int(self.job_id), signal.SIGINT)
