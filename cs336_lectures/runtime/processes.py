"""What the runtime asks of the operating system about processes, in one place: whether it can
fork (two rules: a supervised trace needs only fork(); the warm kernel also needs Linux's /proc
and child subreaper), the OpenMP runtime that survives fork, the process table, killing
process groups and sessions, and a child that dies with its parent.

    >>> kernel_can_fork()
    True
    >>> kill_session(kernel.pid)  # the kernel and everything a lecture started under it
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from typing import Iterator


def can_fork() -> bool:
    """Whether a traced lecture can run in a forked, supervised child (tracing/supervisor.py)."""
    return hasattr(os, "fork") and sys.platform != "darwin"  # macOS frameworks do not survive fork


def kernel_can_fork() -> bool:
    """The warm kernel's checkpoints need fork(), and Linux's /proc (to list child processes)
    and child subreaper (to adopt what a lecture left behind)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def fork_safe_openmp() -> str | None:
    """LLVM's OpenMP runtime, if installed (Debian: libomp5), to load in place of torch's GNU one.

    torch's CPU operations run on an OpenMP thread pool. GNU's (libgomp) cannot be forked: a
    child that starts a parallel operation after its parent ran one waits forever for threads it
    does not have. LLVM's re-creates its pool in the child, so checkpoints can be taken after
    torch has computed in parallel; it provides the same GOMP_* entry points and splits work by
    the same thread count, so results are the same. Without it the kernel stops taking
    checkpoints once torch's pool is running (kernel/process.py says why in its reply)."""
    if not sys.platform.startswith("linux"):
        return None
    return ctypes.util.find_library("omp")


def process_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, fields of /proc/PID/stat after the command name) for each live process: fields[0] is
    its state, [1] its parent, [2] its process group, [3] its session. Nothing without /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as file:
                    yield int(entry), file.read().rsplit(")", 1)[1].split()
            except OSError:
                continue


def killed_by(returncode: int) -> str | None:
    """The name of the signal that ended a process, from its return code ("SIGKILL"), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def kill_group(group: int) -> None:
    """SIGKILL to every process of the group; nothing if it is gone already."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_session(leader: int) -> None:
    """SIGKILL to every process of the session `leader` started (all its process groups)."""
    for group in {leader} | {int(fields[2]) for _, fields in process_stats() if int(fields[3]) == leader}:
        kill_group(group)


def kill_process_group(process: subprocess.Popen) -> None:
    """SIGKILL to the process's group (it leads one: start_new_session), then reap it."""
    kill_group(process.pid)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def die_with_parent(parent: int) -> None:
    """Linux: the child gets SIGKILL when the parent dies (the server kills a stuck `trace` command)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def child_processes() -> list[int] | None:
    """This process's live child processes, or None where the platform cannot list them."""
    children: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as file:
                children += [int(pid) for pid in file.read().split()]
    except OSError:
        return None
    live = []
    for pid in children:
        try:
            with open(f"/proc/{pid}/stat") as file:
                state = file.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            live.append(pid)
    return live


def openmp_is_fork_safe() -> bool:
    """Whether LLVM's OpenMP runtime was loaded in place of GNU's (fork_safe_openmp found it)."""
    try:
        with open("/proc/self/maps") as maps:
            return any("/libomp" in line for line in maps)
    except OSError:
        return False


def os_thread_count() -> int | None:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether the process exists (a resumed run is not our child, so waitpid cannot tell)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_children() -> None:
    """Collect the exit status of every child that has ended, without waiting for the others."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
