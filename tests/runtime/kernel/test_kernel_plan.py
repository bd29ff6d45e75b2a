"""The kernel's resume plan (Kernel.plan in kernel/process.py), in this process: which checkpoint an edit
resumes from, or why the whole lecture runs. test_kernel.py checks the same decisions end to end
against fresh traces; these run in milliseconds, so mutation testing can use them."""

from __future__ import annotations

import socket

import pytest

from cs336_lectures.runtime.kernel.process import Checkpoint, Kernel, LastGoodRun
from cs336_lectures.runtime.i18n.run_messages import note
from test_kernel import SIMPLE

SOURCE = SIMPLE  # sections intro, middle (calling helper) and last
# The step at which each definition first ran (-1: at import), and the checkpoint before each section.
FIRST_STEP = {"main": 0, "intro": 3, "middle": 10, "helper": 11, "last": 18}
SECTIONS = [("intro", 2), ("middle", 9), ("last", 18)]


def call_line(source: str, section: str) -> int:
    """main()'s line that calls `section`, where its checkpoint is taken."""
    return next(number for number, line in enumerate(source.splitlines(), 1) if line.strip() == f"{section}()")


@pytest.fixture
def kernel(tmp_path):
    ours, theirs = socket.socketpair()
    made = Kernel(tmp_path / "lec.py", tmp_path, theirs, ["cs336-lectures", "trace", "lec.py"])
    yield made
    made.listener.close()
    made.selector.close()
    ours.close()
    theirs.close()


def finish(kernel: Kernel, source: str = SOURCE, first_step: dict | None = None, sections=SECTIONS,
           unsafe=None) -> list[Checkpoint]:
    checkpoints = [Checkpoint(pid=100 + index, index=index, section=name, line=call_line(SOURCE, name), steps=steps,
                              source=source) for index, (name, steps) in enumerate(sections)]
    kernel.finished = LastGoodRun(dict(FIRST_STEP if first_step is None else first_step), checkpoints, unsafe, 3)
    return checkpoints


def planned(kernel: Kernel, source: str, forced=None) -> tuple[str | None, list[str], str | None]:
    checkpoint, changed, reason = kernel.plan(source, forced)
    return (checkpoint.section if checkpoint else None, [change["name"] for change in changed],
            None if reason is None else str(reason))


def test_the_first_run_and_a_forced_run_are_whole(kernel):
    assert planned(kernel, SOURCE) == (None, [], "the first run of the lecture")
    finish(kernel)
    forced = note("{module} changed", module="helpers.py")
    assert kernel.plan(SOURCE, forced) == (None, [], forced)


def test_an_edit_resumes_from_the_last_checkpoint_before_its_code_first_ran(kernel):
    finish(kernel)
    assert planned(kernel, SOURCE.replace("a = random.random()", "a = random.random() * 2")) == ("intro", ["intro"], None)
    assert planned(kernel, SOURCE.replace("helper(BASE)", "helper(BASE) + 1")) == ("middle", ["middle"], None)
    assert planned(kernel, SOURCE.replace("n * 10", "n * 11")) == ("middle", ["helper"], None)
    assert planned(kernel, SOURCE.replace("+ BASE", "+ BASE + 1")) == ("last", ["last"], None)
    assert planned(kernel, SOURCE) == ("last", [], None)  # nothing changed: only the last section runs again


def test_a_checkpoint_taken_at_the_step_the_code_first_ran_is_used(kernel):
    finish(kernel, first_step={**FIRST_STEP, "last": 18})
    assert planned(kernel, SOURCE.replace("+ BASE", "+ BASE + 1")) == ("last", ["last"], None)
    finish(kernel, first_step={**FIRST_STEP, "last": 17})
    assert planned(kernel, SOURCE.replace("+ BASE", "+ BASE + 1")) == ("middle", ["last"], None)


def test_the_earliest_changed_function_decides(kernel):
    finish(kernel)
    both = SOURCE.replace("+ BASE", "+ BASE + 1").replace("a = random.random()", "a = random.random() * 2")
    assert planned(kernel, both) == ("intro", ["intro", "last"], None)


def test_new_and_removed_functions(kernel):
    finish(kernel)
    added = SOURCE + "\n\ndef extra():\n    \"\"\"New.\"\"\"\n    return 1\n"
    checkpoint, changed, reason = kernel.plan(added, None)
    assert checkpoint.section == "last" and reason is None  # never ran: the last checkpoint will do
    assert changed == [{"name": "extra", "first": 31, "text": 'def extra():\n    """New."""\n    return 1',
                        "docstring": "New."}]
    finish(kernel, source=added, first_step={**FIRST_STEP, "extra": 12})
    checkpoint, changed, reason = kernel.plan(SOURCE, None)
    assert (checkpoint.section, changed, reason) == ("middle", [{"name": "extra"}], None)


def test_each_checkpoint_is_compared_with_the_source_it_holds(kernel):
    """After a resumed run, earlier checkpoints hold the older source, later ones the newer."""
    newer = SOURCE.replace("+ BASE", "+ BASE + 1")
    intro, middle, last = finish(kernel)
    last.source = newer
    assert planned(kernel, newer) == ("last", [], None)
    assert planned(kernel, newer.replace("n * 10", "n * 12")) == ("middle", ["helper", "last"], None)
    assert planned(kernel, SOURCE) == ("last", ["last"], None)  # back to the older text, from the same checkpoint


def test_edits_that_need_a_whole_run_say_why(kernel):
    finish(kernel)
    assert planned(kernel, SOURCE.replace("BASE = 5", "BASE = 6")) == (None, [], "module-level code changed (line 5)")
    assert planned(kernel, SOURCE.replace("    last()\n", "    last()\n    intro()\n"))[2] == "main() changed"
    assert planned(kernel, SOURCE + "\ndef (:\n") == (None, [], "the lecture does not parse")
    finish(kernel, first_step={**FIRST_STEP, "helper": -1})
    assert planned(kernel, SOURCE.replace("n * 10", "n * 11")) == (
        None, [], "the edit changes code that ran before the first section")


def test_without_checkpoints_the_reason_is_the_runs(kernel):
    finish(kernel, sections=[], unsafe=note("the lecture started a thread that is still alive"))
    assert planned(kernel, SOURCE) == (None, [], "no checkpoint: the lecture started a thread that is still alive")
    finish(kernel, sections=[])
    kernel.finished.sections = 0
    assert planned(kernel, SOURCE) == (None, [], "main() calls no top-level function of the lecture")
    finish(kernel, sections=[])
    assert planned(kernel, SOURCE) == (None, [], "no checkpoint was kept")


def test_the_next_checkpoint_is_that_of_the_following_section(kernel):
    intro, middle, last = finish(kernel)
    assert kernel._next_checkpoint(intro) is middle and kernel._next_checkpoint(middle) is last
    assert kernel._next_checkpoint(last) is None
    kernel.finished.checkpoints.remove(middle)
    assert kernel._next_checkpoint(intro) is None
    kernel.finished = None
    assert kernel._next_checkpoint(intro) is None


def test_starts_and_outlines(kernel):
    assert kernel.starts(SOURCE) == [1, 3, 5, 8, 14, 18, 23, 27]
    assert kernel.starts("def (:\n") == []
    assert kernel.outline(SOURCE) is kernel.outline(SOURCE)  # parsed once per source
    assert kernel.outline("def (:\n") is None and "def (:\n" in kernel.outlines
