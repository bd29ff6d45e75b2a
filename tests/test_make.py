"""What `make run` and `make test` do before they run anything: each stage says what it does,
system packages are installed or named in one line, and `make run` serves without tracing first."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "system-packages.sh"
NOBODY = 65534

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian system (no dpkg-query)")


def dry_run(target: str, tmp_path: Path) -> list[str]:
    """The commands `make -n TARGET` would run in a copy of the build files with no environment installed."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    return subprocess.run(["make", "--no-print-directory", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True).stdout.splitlines()


@needs_make
def test_make_run_installs_then_serves_without_tracing_first(tmp_path):
    commands = dry_run("run", tmp_path)
    assert commands[0] == 'scripts/system-packages.sh "make run" libomp5'
    assert commands[1].startswith("scripts/install-python-packages.sh .venv ")
    assert any(command.startswith('echo "==> starting the viewer') for command in commands)
    assert commands[-1].startswith(".venv/bin/cs336-lectures serve lectures/lecture_01.py")
    assert not any("cs336-lectures trace" in command for command in commands)  # the server traces what is stale


@needs_make
def test_make_test_installs_every_system_package_the_suite_needs(tmp_path):
    commands = dry_run("test", tmp_path)
    packages = commands[0].removeprefix('scripts/system-packages.sh "the tests" ').split()
    assert set(packages) >= {"chromium", "libomp5", "fonts-noto-cjk", "slurm-wlm", "slurm-client", "slurmdbd", "munge",
                             "mariadb-server"}
    assert commands[-1] == ".venv/bin/python -m pytest -q"
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")
    assert "apt-get" not in (ROOT / ".ci" / "run").read_text()


@needs_dpkg
def test_installed_packages_are_one_line(tmp_path):
    result = subprocess.run([SCRIPT, "make run", "bash", "coreutils"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "==> system packages for make run: installed (bash coreutils)\n"


@needs_dpkg
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to run the script as another user")
def test_without_root_a_missing_package_stops_with_one_line_saying_how(tmp_path):
    result = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", SCRIPT,
                             "the tests", "bash", "no-such-package-here"], capture_output=True, text=True, cwd="/")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("make: missing system packages for the tests: no-such-package-here; install them with: "
                             "sudo apt-get install -y no-such-package-here (or run with SYSTEM_PACKAGES=no to go without)\n")


def test_system_packages_no_skips_the_check():
    result = subprocess.run([SCRIPT, "the tests", "no-such-package-here"], capture_output=True, text=True,
                            env={**os.environ, "SYSTEM_PACKAGES": "no"})
    assert result.returncode == 0 and "not checked (SYSTEM_PACKAGES=no)" in result.stdout
