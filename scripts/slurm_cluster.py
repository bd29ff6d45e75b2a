#!/usr/bin/env python3
"""A throw-away one-node Slurm cluster, from Debian's packages, living in one folder.

    $ python3 scripts/slurm_cluster.py start /tmp/cluster     # prints the environment to use it
    $ export SLURM_CONF=/tmp/cluster/etc/slurm.conf
    $ cs336-lectures trace lectures/example_basics.py --executor slurm
    $ python3 scripts/slurm_cluster.py stop /tmp/cluster

Everything the cluster writes (config, munge key and socket, state, spool, logs, the accounting
database) is in the folder, and every port is a free one picked at start, so it touches nothing
of a real installation and several can run side by side. The daemons: munged (authentication),
MariaDB and slurmdbd (accounting: `sacct`, which submitit asks for a job's state), slurmctld (the
controller) and slurmd (the one node, with every CPU of this machine). Clients find it through
SLURM_CONF alone. The tests' fixture (tests/runtime/cli/slurm/conftest.py) starts and stops it the same way.

Packages (Debian 12): slurm-wlm (slurmctld, slurmd and the client commands), slurmdbd, munge,
mariadb-server.
"""

from __future__ import annotations

import argparse
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

CLUSTER = "cs336test"
NODE = "node1"
PARTITION = "debug"
DATABASE = "slurm_acct_db"
START_TIMEOUT_S = 120.0  # MariaDB's first start on a busy two-core machine takes tens of seconds
DAEMONS = ("slurmd", "slurmctld", "slurmdbd", "mariadb", "munged")  # the order they are stopped in
TOOLS = {"munged": "munge", "mariadb-install-db": "mariadb-server", "mariadbd": "mariadb-server",
         "slurmdbd": "slurmdbd", "slurmctld": "slurm-wlm", "slurmd": "slurm-wlm", "sbatch": "slurm-wlm"}


class ClusterError(Exception):
    """The cluster could not start (one line, naming the daemon and its log)."""


def missing_packages() -> list[str]:
    """The Debian packages whose programs are not installed here."""
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return sorted({package for tool, package in TOOLS.items() if shutil.which(tool, path=search) is None})


def _program(name: str) -> str:
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin") or name


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def environment(folder: Path) -> dict[str, str]:
    """What a client (sbatch, squeue, sacct, submitit) needs to talk to the cluster in `folder`."""
    return {"SLURM_CONF": str(folder / "etc" / "slurm.conf")}


def start(folder: Path) -> dict[str, str]:
    """Start the cluster in `folder` (created if needed); its client environment."""
    folder = folder.absolute()
    for sub in ("etc", "munge", "state", "spool", "log", "run", "mysql"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # munged refuses a key or socket in a folder others may write to
    user = getpass.getuser()
    ports = {name: _free_port() for name in ("slurmctld", "slurmd", "slurmdbd", "mariadb")}
    try:
        _write_slurm_conf(folder, user, ports)  # slurmdbd reads it too
        _start_munge(folder)
        _start_accounting(folder, user, ports)
        env = {**os.environ, **environment(folder)}
        _run([_program("sacctmgr"), "-i", "add", "cluster", CLUSTER], env, "sacctmgr add cluster")
        _spawn(folder, "slurmctld", [_program("slurmctld"), "-D"], env)
        _spawn(folder, "slurmd", [_program("slurmd"), "-D", "-N", NODE], env)
        _wait(lambda: _node_idle(env), folder, "slurmd", "the node to come up idle")
    except BaseException:
        stop(folder)
        raise
    return environment(folder)


def _start_munge(folder: Path) -> None:
    key = folder / "munge" / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = folder / "munge" / "munge.socket"
    _run([_program("munged"), "--force", f"--key-file={key}", f"--socket={socket_path}",
          f"--pid-file={folder / 'run' / 'munged.pid'}", f"--log-file={folder / 'log' / 'munged.log'}",
          f"--seed-file={folder / 'munge' / 'munge.seed'}"], os.environ, "munged")  # it forks to the background
    _wait(socket_path.exists, folder, "munged", "munge's socket")


def _start_accounting(folder: Path, user: str, ports: dict[str, int]) -> None:
    data = folder / "mysql"
    sql_socket = folder / "run" / "mariadb.socket"
    if not (data / "mysql").exists():
        _run([_program("mariadb-install-db"), "--no-defaults", f"--datadir={data}", f"--user={user}",
              "--auth-root-authentication-method=socket", "--skip-test-db"], os.environ, "mariadb-install-db")
    _spawn(folder, "mariadb", [_program("mariadbd"), "--no-defaults", f"--datadir={data}", f"--socket={sql_socket}",
                               f"--port={ports['mariadb']}", "--bind-address=127.0.0.1", f"--user={user}",
                               f"--pid-file={folder / 'run' / 'mariadb.pid'}",
                               f"--log-error={folder / 'log' / 'mariadb.log'}", "--innodb-buffer-pool-size=32M"],
           os.environ)
    _wait(sql_socket.exists, folder, "mariadb", "MariaDB's socket")
    password = os.urandom(12).hex()
    (folder / "etc" / "db-password").write_text(password)
    sql = (f"CREATE DATABASE IF NOT EXISTS {DATABASE}; "
           f"CREATE OR REPLACE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{password}'; "
           f"GRANT ALL ON {DATABASE}.* TO 'slurm'@'127.0.0.1';")
    # mariadb-install-db made the account of the user it ran as, reached through the socket.
    _run([_program("mariadb"), "--no-defaults", f"--socket={sql_socket}", "-u", user,
          "-e", sql], os.environ, "mariadb (creating the accounting database)")
    conf = folder / "etc" / "slurmdbd.conf"
    conf.write_text("\n".join([
        "AuthType=auth/munge", f"AuthInfo=socket={folder / 'munge' / 'munge.socket'}",
        "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={ports['slurmdbd']}", f"SlurmUser={user}",
        f"PidFile={folder / 'run' / 'slurmdbd.pid'}", f"LogFile={folder / 'log' / 'slurmdbd.log'}", "DebugLevel=info",
        "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={ports['mariadb']}",
        "StorageUser=slurm", f"StoragePass={password}", f"StorageLoc={DATABASE}", ""]))
    conf.chmod(0o600)  # slurmdbd refuses a config others can read (it holds the password)
    env = {**os.environ, **environment(folder)}
    _spawn(folder, "slurmdbd", [_program("slurmdbd"), "-D"], env)
    _wait(lambda: _listening(ports["slurmdbd"]), folder, "slurmdbd", "slurmdbd's port")


def _write_slurm_conf(folder: Path, user: str, ports: dict[str, int]) -> None:
    cpus = os.cpu_count() or 1
    (folder / "etc" / "slurm.conf").write_text("\n".join([
        f"ClusterName={CLUSTER}",
        f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
        f"SlurmctldPort={ports['slurmctld']}", f"SlurmdPort={ports['slurmd']}",
        f"SlurmUser={user}", f"SlurmdUser={user}",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={folder / 'munge' / 'munge.socket'}",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'run' / 'slurmctld.pid'}", f"SlurmdPidFile={folder / 'run' / 'slurmd.pid'}",
        f"SlurmctldLogFile={folder / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={folder / 'log' / 'slurmd.log'}",
        # No cgroups: the cluster runs in containers and CI machines where they are not delegated.
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "SwitchType=switch/none", "MpiDefault=none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "SchedulerType=sched/backfill",
        "ReturnToService=2", "MinJobAge=300", "KillWait=2", "InactiveLimit=0",
        "AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=127.0.0.1",
        f"AccountingStoragePort={ports['slurmdbd']}", "JobCompType=jobcomp/none",
        # Clients reach slurmdbd through the munge socket named here, not AuthInfo's.
        f"AccountingStoragePass={folder / 'munge' / 'munge.socket'}",
        f"NodeName={NODE} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        ""]))


def _spawn(folder: Path, name: str, command: list[str], env: dict) -> None:
    """Start a daemon in the foreground of its own session, output to its log; its pid in run/NAME.fg.pid."""
    log = open(folder / "log" / f"{name}.out", "ab")
    with log:
        process = subprocess.Popen(command, env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    (folder / "run" / f"{name}.fg.pid").write_text(str(process.pid))


def _run(command: list[str], env: dict | os._Environ, what: str) -> str:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S)
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip().splitlines()
        raise ClusterError(f"{what} failed: {output[-1] if output else f'exit status {done.returncode}'}")
    return done.stdout


def _wait(ready, folder: Path, daemon: str, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        pid_file = folder / "run" / f"{daemon}.fg.pid"
        if pid_file.exists() and not _alive(int(pid_file.read_text())):
            raise ClusterError(f"{daemon} exited while waiting for {what} (see {folder / 'log'})")
        if time.monotonic() > deadline:
            raise ClusterError(f"no {what} after {START_TIMEOUT_S:.0f} s (see {folder / 'log'})")
        time.sleep(0.2)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _node_idle(env: dict) -> bool:
    done = subprocess.run([_program("sinfo"), "-h", "-n", NODE, "-o", "%t"], env=env, capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "idle"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie (a daemon that died, not yet reaped by us) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return True


def stop(folder: Path) -> None:
    """Stop every daemon of the cluster in `folder` (jobs still running die with slurmd)."""
    folder = folder.absolute()
    pids = []
    for name in DAEMONS:
        for pid_file in (folder / "run" / f"{name}.fg.pid", folder / "run" / f"{name}.pid"):
            try:
                pid = int(pid_file.read_text())
            except (OSError, ValueError):
                continue
            if _alive(pid):
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
    deadline = time.monotonic() + 30
    for pid in pids:
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        try:  # a daemon this process started (the tests' fixture) is its child to reap
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    _kill_job_steps(folder)


def _kill_job_steps(folder: Path) -> None:
    """slurmstepd processes of this cluster's jobs (they outlive slurmd) are found by their config path."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"slurmstepd" in command and str(folder).encode() in environ:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slurm_cluster.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("folder", type=Path, help="where the cluster keeps everything (created by start)")
    args = parser.parse_args(argv)
    if args.action == "stop":
        stop(args.folder)
        return 0
    missing = missing_packages()
    if missing:
        print(f"slurm_cluster.py: error: missing Debian packages: {' '.join(missing)} "
              f"(apt-get install {' '.join(missing)})", file=sys.stderr)
        return 2
    try:
        env = start(args.folder)
    except ClusterError as error:
        print(f"slurm_cluster.py: error: {error}", file=sys.stderr)
        return 1
    for key, value in env.items():
        print(f"export {key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
