"""Mutation testing of the Python modules where a silent mistake costs a wrong trace or an unsafe
page (`make mutation`; not part of `make test` nor of CI: it takes tens of minutes on two cores).

mutmut changes one thing at a time in a module (a comparison flipped, a condition dropped, a
constant changed) and runs the tests that cover it; a mutant the tests still pass is a mistake
they would let through. Each module runs on its own, in var/mutation/NAME/ (a copy of the
project, so the working tree is never touched), with only its own fast tests, one test process
at a time.

    python tests/mutation/run_mutmut.py                 # every module below, then the scores
    python tests/mutation/run_mutmut.py edits values    # some of them
    python tests/mutation/run_mutmut.py --scores        # the scores of the last runs, nothing run
    python tests/mutation/run_mutmut.py --survivors edits  # after adding tests: the survivors again

TARGETS is the one place that names the modules, their tests and, for a module whose other parts
need a live kernel, the functions to mutate.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "var" / "mutation"
COPIED = ("cs336_lectures", "tests", "lectures", "trace", "viewer", "pyproject.toml")


@dataclass(frozen=True)
class Target:
    module: str  # path of the module, from the repository root
    tests: tuple[str, ...]  # pytest arguments that select its tests
    functions: tuple[str, ...] = field(default=())  # mutmut's names (glob) of the functions to mutate; () for all


TARGETS = {
    "edits": Target("cs336_lectures/runtime/kernel/edits.py", ("tests/runtime/kernel/test_edits.py",)),
    "kernel_plan": Target("cs336_lectures/runtime/kernel/process.py", ("tests/runtime/kernel/test_kernel_plan.py",),
                          ("*xǁKernelǁplan__mutmut_*", "*xǁKernelǁ_next_checkpoint__mutmut_*",
                           "*xǁKernelǁstarts__mutmut_*", "*xǁKernelǁoutline__mutmut_*")),
    "trace_compare": Target("cs336_lectures/runtime/trace/compare.py", ("tests/runtime/trace/test_trace_compare.py", "-k", "not two_runs")),
    "values": Target("cs336_lectures/runtime/trace/values.py", ("tests/runtime/trace/test_values.py", "tests/runtime/trace/test_values_exact.py")),
    "templates": Target("cs336_lectures/runtime/i18n/templates.py", ("tests/runtime/i18n/test_i18n.py", "-k", "template or shortest")),
    "catalog": Target("cs336_lectures/runtime/i18n/catalog.py",
                      ("tests/runtime/i18n/test_catalog.py", "tests/runtime/i18n/test_i18n.py", "-k",
                       "not trace and not example and not annotations")),
    "passive_svg": Target("cs336_lectures/runtime/render/passive_svg.py",
                          ("tests/runtime/server/test_faults_web.py", "-k", "svg and not browser and not asset_opened and not build")),
}


def prepare(name: str, target: Target) -> Path:
    """var/mutation/NAME/: today's project files and a mutmut configuration for this target alone."""
    folder = WORK / name
    folder.mkdir(parents=True, exist_ok=True)
    for entry in COPIED:
        source, destination = ROOT / entry, folder / entry
        if source.is_dir():
            shutil.copytree(source, destination, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache"))
        else:
            shutil.copy2(source, destination)

    def listed(values: tuple[str, ...]) -> str:
        return "".join(f"\n    {value}" for value in values)

    # mutmut reads setup.cfg when pyproject.toml has no [tool.mutmut]; the package keeps none.
    (folder / "setup.cfg").write_text(
        "[mutmut]\n"
        f"source_paths ={listed(('cs336_lectures',))}\n"
        f"only_mutate ={listed((target.module,))}\n"
        f"also_copy ={listed(('lectures', 'trace', 'viewer'))}\n"
        f"pytest_add_cli_args_test_selection ={listed(target.tests)}\n"
        f"pytest_add_cli_args ={listed(('-p', 'no:cacheprovider', '-m', 'not browser'))}\n")
    return folder


def run(name: str, target: Target, max_children: int, survivors_only: bool) -> int:
    """Run mutmut on the target; with survivors_only, only on the mutants that survived its last run."""
    chosen = target.functions
    if survivors_only:
        chosen = tuple(results(name, target).get("survived", ()))
        if not chosen:
            return 0
    folder = prepare(name, target)
    print(f"==> mutmut: {target.module} ({' '.join(target.tests)})", flush=True)
    command = ["nice", "-n", "10", str(Path(sys.executable).with_name("mutmut")), "run", "--max-children",
               str(max_children), *chosen]
    # Hypothesis tests draw a tenth of their examples per mutant (at least ten): the whole suite
    # runs them in full.
    environment = {**os.environ, "CS336_HYPOTHESIS_SCALE": "0.1"}
    return subprocess.run(command, cwd=folder, env=environment).returncode


def results(name: str, target: Target) -> dict[str, list[str]]:
    """mutmut's verdicts for this target: status -> mutant names."""
    folder = WORK / name
    if not (folder / "mutants").is_dir():
        return {}
    listing = subprocess.run([str(Path(sys.executable).with_name("mutmut")), "results", "--all", "true"], cwd=folder,
                             capture_output=True, text=True).stdout
    verdicts: dict[str, list[str]] = {}
    for line in listing.splitlines():
        match = re.fullmatch(r"\s*(\S+): (.+)", line)
        if match is None:
            continue
        mutant, status = match.groups()
        if target.functions and not any(fnmatch.fnmatchcase(mutant, pattern) for pattern in target.functions):
            continue
        verdicts.setdefault(status, []).append(mutant)
    return verdicts


def report(names: list[str]) -> None:
    print(f"\n{'module':<16} {'mutants':>7} {'killed':>7} {'survived':>8} {'other':>6}  score")
    for name in names:
        verdicts = results(name, TARGETS[name])
        total = sum(len(mutants) for mutants in verdicts.values())
        killed = len(verdicts.get("killed", [])) + len(verdicts.get("timeout", []))
        survived = len(verdicts.get("survived", []))
        other = total - killed - survived
        score = f"{100 * killed / total:.0f}%" if total else "-"
        print(f"{name:<16} {total:>7} {killed:>7} {survived:>8} {other:>6}  {score}")
        for status, mutants in sorted(verdicts.items()):
            if status not in ("killed", "timeout"):
                for mutant in mutants:
                    print(f"    {status}: {mutant}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"targets to run (default: all): {', '.join(TARGETS)}")
    parser.add_argument("--scores", action="store_true", help="only print the scores of the last runs")
    parser.add_argument("--survivors", action="store_true",
                        help="run again only the mutants that survived the last run (after adding tests)")
    parser.add_argument("--max-children", type=int, default=1, help="test processes at a time (default 1)")
    args = parser.parse_args()
    unknown = [name for name in args.names if name not in TARGETS]
    if unknown:
        parser.error(f"no target {', '.join(unknown)} (targets: {', '.join(TARGETS)})")
    names = args.names or list(TARGETS)
    if not args.scores:
        for name in names:
            run(name, TARGETS[name], args.max_children, args.survivors)
    report(names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
