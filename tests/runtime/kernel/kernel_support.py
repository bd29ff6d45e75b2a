"""What the kernel's tests share: run limits, and the fresh trace a kernel's trace must equal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LIMITS = {"max_steps": 200_000, "timeout": 120.0}


def fresh_trace(folder: Path, lecture: str = "lec.py") -> dict:
    """What `cs336-lectures trace` writes for `lecture`, in a new process."""
    subprocess.run([sys.executable, "-m", "cs336_lectures", "trace", lecture, "-o", str(folder), "--quiet",
                    "--max-steps", str(LIMITS["max_steps"]), "--timeout", f"{LIMITS['timeout']:g}"],
                   check=False, capture_output=True, timeout=300)
    return json.loads((folder / f"{Path(lecture).stem}.json").read_text())
