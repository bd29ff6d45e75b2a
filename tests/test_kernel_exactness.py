"""The warm kernel never shows what a fresh run would not: for each way lecture code can depend on a
definition without running traced (issue 19's classes), an edit served by the kernel gives the
trace that `cs336-lectures trace` writes for the saved file, and says why it resumed where it did.

One kernel serves every case of this file in turn (a new case's first save changes module-level
code, so the kernel runs it whole; then the edit): the comparison is what each case checks. A
lecture's files (*.txt here) are compared as a fresh run at the moment of the save would find them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cs336_lectures.runtime.kernel_client import KernelProcess, forking_supported
from cs336_lectures.runtime.trace_compare import comparable, first_difference
from kernel_support import LIMITS, fresh_trace

pytestmark = [pytest.mark.skipif(not forking_supported(), reason="the kernel needs fork() and /proc (Linux)"),
              pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """serve(before, after) -> the kernel's reply to the save of `after`, once its trace was
    checked against a fresh one."""
    folder = tmp_path_factory.mktemp("exact")
    previous = os.getcwd()
    os.chdir(folder)
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    cases = iter(range(1_000))

    def serve(before: str, after: str) -> dict:
        case = next(cases)
        for file in folder.glob("*.txt"):
            file.unlink()
        marker = f"CASE = {case}\n"  # a module-level change: the first run of a case is whole
        Path("lec.py").write_text(marker + before)
        first = process.run(**LIMITS)
        assert first is not None and first["mode"] == "full", first
        Path("lec.py").write_text(marker + after)
        # The fresh run starts from the files as the save found them, as the served run did.
        files = {path: path.read_bytes() for path in folder.glob("*.txt")}
        reply = process.run(**LIMITS)
        assert reply is not None
        for path in folder.glob("*.txt"):
            path.unlink()
        for path, content in files.items():
            path.write_bytes(content)
        produced = json.loads((process.out / "lec.json").read_text())
        fresh = fresh_trace(folder / f"fresh-{case}")
        difference = first_difference(comparable(produced), comparable(fresh))
        assert difference is None, (difference, reply)
        return reply

    yield serve
    process.close()
    os.chdir(previous)


def resumed_at(reply: dict) -> str | None:
    return reply.get("section") if reply["mode"] == "incremental" else None


# --- 1. code that runs where the tracer does not look ---------------------------------------------

REPR = '''
class Box:
    def __init__(self, size):
        self.size = size

    def __repr__(self):
        return shown(self.size)

    @property
    def doubled(self):
        return shown(2 * self.size)


def main():
    first()
    second()


def first():
    box = Box(3)  # @inspect box box.doubled


def second():
    x = 1  # @inspect x


def shown(size):
    return f"Box<{size}>"
'''


def test_a_helper_the_value_encoder_calls(served):
    """__repr__ and a property read by @inspect run untraced, inside the value encoder."""
    reply = served(REPR, REPR.replace('f"Box<{size}>"', 'f"Box[{size}]"'))
    assert resumed_at(reply) != "second"
    assert "`shown` changed, and code that ran earlier refers to it" in reply["reason"], reply


POOL = '''
import multiprocessing


def main():
    first()
    second()


def first():
    with multiprocessing.get_context("fork").Pool(2) as pool:
        squares = pool.map(square, [1, 2, 3])  # @inspect squares


def second():
    x = 1  # @inspect x


def square(n):
    return n * n
'''


def test_a_function_a_pool_maps(served):
    reply = served(POOL, POOL.replace("n * n", "n * n + 1"))
    assert resumed_at(reply) != "second"


THREAD = '''
import _thread


def main():
    first()
    second()


def first():
    done = _thread.allocate_lock()
    done.acquire()
    results = []
    _thread.start_new_thread(work, (results, done))
    done.acquire()
    print(results)


def second():
    x = 1  # @inspect x


def work(results, done):
    results.append(41)
    done.release()
'''


def test_a_function_a_raw_thread_runs(served):
    reply = served(THREAD, THREAD.replace("append(41)", "append(42)"))
    assert resumed_at(reply) != "second"


# --- 2. objects that still hold the old code ------------------------------------------------------

GENERATORS = '''
def main():
    first()
    second()
    third()


def counter():
    n = 0
    while True:
        n += 1
        yield n


STREAM = counter()


def first():
    a = next(STREAM)  # @inspect a
    global LOCAL
    LOCAL = countdown(5)


def second():
    b = next(STREAM) + next(LOCAL)  # @inspect b


def third():
    c = next(LOCAL)  # @inspect c


def countdown(n):
    while n:
        yield n
        n -= 1
'''


def test_a_generator_made_at_import(served):
    reply = served(GENERATORS, GENERATORS.replace("n += 1\n", "n += 2\n"))
    assert reply["mode"] == "full", reply


def test_a_generator_made_in_an_earlier_section(served):
    reply = served(GENERATORS, GENERATORS.replace("n -= 1", "n -= 2"))
    assert resumed_at(reply) in (None, "first"), reply


COPIED = '''
import types


def main():
    first()
    second()


def first():
    global COPY
    COPY = types.FunctionType(helper.__code__, globals(), "copy")


def second():
    x = COPY(2)  # @inspect x


def helper(n):
    return n * 10
'''


def test_a_copy_of_a_function_made_from_its_code(served):
    reply = served(COPIED, COPIED.replace("n * 10", "n * 11"))
    assert resumed_at(reply) != "second"


# --- 3. sections that use a function without calling it ---------------------------------------------

LINKED = '''
from cs336_lectures import link, text


def main():
    first()
    second()


def first():
    link(helper)
    doc = helper.__doc__  # @inspect doc
    name = helper.__name__  # @inspect name


def second():
    text("second")


def helper(n):
    """Multiplies by ten."""
    return n * 10
'''


def test_a_link_to_a_function_that_moved(served):
    reply = served(LINKED, LINKED.replace('    text("second")\n', '    text("second")\n    text("more")\n'))
    assert resumed_at(reply) != "second"


def test_a_docstring_read_by_an_earlier_section(served):
    served(LINKED, LINKED.replace("Multiplies by ten.", "Ten times."))


def test_a_renamed_function_an_earlier_section_named(served):
    reply = served(LINKED, LINKED.replace("def helper(n):", "def times_ten(n):"))
    assert reply["state"] == "error"  # NameError, as in a fresh run


SHADOWED = '''
def main():
    first()
    second()


def first():
    n = len([1, 2, 3])  # @inspect n
    names = sorted(name for name in globals() if not name.startswith("_"))  # @inspect names


def second():
    x = 1  # @inspect x
'''


def test_a_new_function_that_shadows_a_builtin(served):
    reply = served(SHADOWED.replace("    names = sorted", "    # names = sorted"),
                   SHADOWED.replace("    names = sorted", "    # names = sorted") + "\n\ndef len(x):\n    return 99\n")
    assert resumed_at(reply) != "second"


def test_a_new_function_an_earlier_globals_listing_shows(served):
    reply = served(SHADOWED, SHADOWED + "\n\ndef extra():\n    return 1\n")
    assert resumed_at(reply) != "second"
    assert "looks names up at run time (`globals`)" in reply["reason"], reply


# --- 4. state outside the process ---------------------------------------------------------------

FILES = '''
def main():
    first()
    second()
    third()


def first():
    with open("log.txt", "w") as file:
        file.write("first\\n")


def second():
    with open("log.txt", "a") as file:
        file.write("second\\n")


def third():
    with open("log.txt") as file:
        lines = file.read().splitlines()  # @inspect lines
'''


def test_files_an_earlier_section_wrote(served):
    reply = served(FILES, FILES.replace('write("second', 'write("SECOND'))
    assert resumed_at(reply) != "second"
    assert "the lecture wrote log.txt, before `second`" in reply["reason"], reply


def test_a_file_an_earlier_section_read_and_a_later_one_wrote(served):
    source = ('''
def main():
    first()
    second()


def first():
    try:
        with open("count.txt") as file:
            seen = file.read()  # @inspect seen
    except FileNotFoundError:
        pass


def second():
    with open("count.txt", "w") as file:
        file.write("1")
''')
    reply = served(source, source.replace('write("1")', 'write("2")'))
    assert resumed_at(reply) != "second"


def test_a_temporary_folder_removed_within_its_section_leaves_checkpoints_usable(served):
    source = '''
import os
import tempfile


def main():
    first()
    second()


def first():
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "data.bin"), "wb") as file:
            file.write(b"123")
        size = os.path.getsize(os.path.join(folder, "data.bin"))  # @inspect size


def second():
    x = 1  # @inspect x
'''
    reply = served(source, source.replace("x = 1", "x = 2"))
    assert resumed_at(reply) == "second" and "reason" not in reply, reply


OPEN_FILE = '''
def main():
    first()
    second()
    third()


def first():
    global DATA
    DATA = open("data.lines", "rb", buffering=0)  # each read moves the shared offset
    a = DATA.read(4)  # @inspect a


def second():
    b = DATA.read(4)  # @inspect b


def third():
    c = DATA.read(6)  # @inspect c
'''


def test_a_file_kept_open_across_sections_reads_from_where_the_checkpoint_was(served):
    (Path.cwd() / "data.lines").write_text("one\ntwo\nthree\n")
    reply = served(OPEN_FILE, OPEN_FILE.replace("c = DATA.read(6)", "c = DATA.read(6).upper()"))
    assert resumed_at(reply) == "third", reply


# --- 5. ranks started by a resumed run ------------------------------------------------------------

RANKS = '''
import multiprocessing


def main():
    first()
    second()


def first():
    x = 1  # @inspect x


def second():
    process = multiprocessing.get_context("fork").Process(target=rank, args=(2,))
    process.start()
    process.join()


def rank(n):
    y = n * 10  # @inspect y
'''


def test_a_resumed_run_adopts_the_processes_it_starts(served):
    reply = served(RANKS, RANKS.replace("x = 1", "x = 2"))
    assert resumed_at(reply) == "first", reply
    trace = json.loads((Path.cwd() / "fresh-{}".format(_last_case(Path.cwd())) / "lec.json").read_text())
    assert trace.get("ranks"), "the fresh trace has the rank: the served one equals it"


def _last_case(folder: Path) -> int:
    return max(int(path.name.split("-")[1]) for path in folder.glob("fresh-*"))
