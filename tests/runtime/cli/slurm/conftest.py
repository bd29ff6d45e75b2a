"""A one-node Slurm cluster for the tests in this folder, started once per session by the same
script a user runs (scripts/slurm_cluster.py) and stopped after the last test. Without Debian's
Slurm packages every test here is skipped, saying which packages are missing."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "scripts" / "slurm_cluster.py"


def _cluster_script():
    spec = importlib.util.spec_from_file_location("slurm_cluster", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory) -> dict[str, str]:
    """The environment (SLURM_CONF) under which sbatch, squeue, sacct and submitit use the cluster."""
    cluster = _cluster_script()
    missing = cluster.missing_packages()
    if missing:
        pytest.skip(f"Slurm is not installed here (missing Debian packages: {', '.join(missing)}; "
                    f"`make test` installs them)")
    # munge's socket lives in it, and a Unix socket path must fit 108 bytes: pytest's folders are short enough.
    folder = Path(tmp_path_factory.mktemp("slurm"))
    try:
        environment = cluster.start(folder)
    except cluster.ClusterError as error:
        pytest.fail(f"the test cluster did not start: {error}")
    yield {**os.environ, **environment}
    cluster.stop(folder)
