"""effects.py: which spans of a run's steps its file writes, programs and forks close to checkpoints.

The audit hook is driven here by hand (an Effects object's `hook`, with the events Python raises),
so that nothing is installed in the test process."""

from __future__ import annotations

import os

from cs336_lectures.runtime.effects import Effects, first_hazard


class Clock:
    """The run's step count, as the kernel's Runner gives it."""

    def __init__(self):
        self.step = -1

    def __call__(self) -> int:
        return self.step


def recorder(tmp_path) -> tuple[Effects, Clock]:
    clock = Clock()
    return Effects(clock, (os.path.join(str(tmp_path / "out"), ""),)), clock


WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def test_a_write_closes_every_checkpoint_after_it(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 5
    effects.hook("open", (str(tmp_path / "log.txt"), "w", WRITE))
    hazards = effects.hazards()
    assert first_hazard(hazards, 5) is None  # taken before the write
    assert "the lecture wrote" in str(first_hazard(hazards, 6)) and "log.txt" in str(first_hazard(hazards, 6))


def test_reads_and_the_runtime_s_own_files_close_nothing(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 2
    effects.hook("open", (str(tmp_path / "data.txt"), "r", os.O_RDONLY))
    effects.hook("open", (str(tmp_path / "out" / "lec.json"), "w", WRITE))
    effects.hook("open", (str(tmp_path / "__pycache__" / "m.cpython-311.pyc"), None, WRITE))
    effects.hook("compile", (b"x", "<string>"))
    assert effects.hazards() == []


def test_a_temporary_folder_removed_before_a_checkpoint_leaves_it_usable(tmp_path):
    effects, clock = recorder(tmp_path)
    folder = str(tmp_path / "tmpabc")
    clock.step = 3
    effects.hook("os.mkdir", (folder, 0o700, -1))
    effects.hook("open", (os.path.join(folder, "data.bin"), "wb", WRITE))
    clock.step = 7
    effects.hook("shutil.rmtree", (folder, None))
    hazards = effects.hazards()
    assert first_hazard(hazards, 3) is None
    assert first_hazard(hazards, 5) is not None  # the folder and its file exist there
    assert first_hazard(hazards, 8) is None  # gone again, as before the run


def test_a_file_removed_that_the_run_did_not_create_stays_a_hazard(tmp_path):
    existing = tmp_path / "kept.txt"
    existing.write_text("x")
    effects, clock = recorder(tmp_path)
    clock.step = 1
    effects.hook("os.remove", (str(existing), -1))
    assert first_hazard(effects.hazards(), 100) is not None


def test_a_file_read_and_written_later_closes_checkpoints_after_the_read(tmp_path):
    effects, clock = recorder(tmp_path)
    path = str(tmp_path / "count.txt")
    clock.step = 2
    effects.hook("open", (path, "r", os.O_RDONLY))
    clock.step = 9
    effects.hook("open", (path, "w", WRITE))
    hazards = effects.hazards()
    assert first_hazard(hazards, 2) is None
    assert "read" in str(first_hazard(hazards, 3))


def test_programs_and_forks_are_hazards_but_the_kernel_s_own_fork_is_not(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 4
    effects.forking = True
    effects.hook("os.fork", ())
    effects.forking = False
    assert effects.hazards() == []
    effects.hook("subprocess.Popen", ("/bin/ls", ["/bin/ls", "-l"], None, None))
    assert str(first_hazard(effects.hazards(), 5)) == "the lecture ran a program (ls)"
    clock.step = 1
    effects.hook("os.fork", ())
    assert str(first_hazard(effects.hazards(), 2)) == "the lecture started a process"


def test_an_existing_folder_made_again_changes_nothing(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 1
    effects.hook("os.mkdir", (str(tmp_path), 0o777, -1))  # makedirs(exist_ok=True) of a cache folder
    assert effects.hazards() == []
