"""effects.py: which spans of a run's steps its file writes, programs and forks close to checkpoints.

The audit hook is driven here by hand (an Effects object's `hook`, with the events Python raises),
so that nothing is installed in the test process."""

from __future__ import annotations

import os

from cs336_lectures.runtime.kernel.effects import Effects, first_hazard


class Clock:
    """The run's step count, as the kernel's ForkedRun gives it."""

    def __init__(self):
        self.step = -1

    def __call__(self) -> int:
        return self.step


def recorder(tmp_path) -> tuple[Effects, Clock]:
    clock = Clock()
    effects = Effects(clock, (os.path.join(str(tmp_path / "out"), ""),))
    effects.owner = os.getpid()  # as install() makes it, without a hook in the test process
    return effects, clock


WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def test_a_write_that_stays_closes_every_checkpoint(tmp_path):
    """A fresh run's earlier sections would find the file as the run left it."""
    effects, clock = recorder(tmp_path)
    clock.step = 5
    effects.hook("open", (str(tmp_path / "log.txt"), "w", WRITE))
    hazards = effects.hazards()
    assert str(first_hazard(hazards, 0)) == f"the lecture wrote {tmp_path / 'log.txt'}"  # outside the working folder: whole
    assert first_hazard(hazards, 6) is not None


def test_reads_and_the_runtime_s_own_files_close_nothing(tmp_path):
    effects, clock = recorder(tmp_path)
    effects.adopt()
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


def test_programs_are_hazards(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 4
    effects.hook("subprocess.Popen", ("/bin/ls", ["/bin/ls", "-l"], None, None))
    assert str(first_hazard(effects.hazards(), 0)) == "the lecture ran a program (ls)"


def test_a_forked_process_reports_its_writes_to_the_run(tmp_path):
    effects, clock = recorder(tmp_path)
    effects.adopt()
    child = os.fork()
    if child == 0:  # as a Pool worker: its hook sees the write, the run's record gets it
        effects.hook("open", (str(tmp_path / "worker.txt"), "w", WRITE))
        os._exit(0)
    os.waitpid(child, 0)
    assert effects.writes == []
    assert "a process the lecture started wrote or ran" in str(first_hazard(effects.hazards(), 0))


def test_an_existing_folder_made_again_changes_nothing(tmp_path):
    effects, clock = recorder(tmp_path)
    clock.step = 1
    effects.hook("os.mkdir", (str(tmp_path), 0o777, -1))  # makedirs(exist_ok=True) of a cache folder
    assert effects.hazards() == []
