"""The warm kernel never shows what a fresh run would not: for each way lecture code can depend on a
definition without running traced (issue 19's classes), an edit served by the kernel gives the
trace that `cs336-lectures trace` writes for the saved file, and says why it resumed where it did.

One kernel serves every case of this file in turn (a new case's first save changes module-level
code, so the kernel runs it whole; then the edit): the comparison is what each case checks. A
lecture's files (*.txt here) are compared as a fresh run at the moment of the save would find them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cs336_lectures.runtime.kernel.client import KernelProcess
from cs336_lectures.runtime.processes import kernel_can_fork
from cs336_lectures.runtime.i18n.run_messages import note
from cs336_lectures.runtime.trace.compare import comparable, first_difference
from kernel_support import LIMITS, fresh_trace

pytestmark = [pytest.mark.skipif(not kernel_can_fork(), reason="the kernel needs fork() and /proc (Linux)"),
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
        restore(folder, files)
        produced = json.loads((process.out / "lec.json").read_text())
        fresh = fresh_trace(folder / f"fresh-{case}")
        difference = first_difference(comparable(produced), comparable(fresh))
        assert difference is None, (difference, reply)
        return reply

    yield serve
    process.close()
    os.chdir(previous)


def restore(folder: Path, files: dict[Path, bytes]) -> None:
    """Put the lecture's files (*.txt) back as they were: `files`, and no others."""
    for path in folder.glob("*.txt"):
        path.unlink()
    for path, content in files.items():
        path.write_bytes(content)


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


# --- generated lectures mixing the patterns, and chains of random edits -----------------------------

PATTERNS = [
    "v{j} = random.random()  # @inspect v{j}",
    "w{j} = helper_{h}({c})  # @inspect w{j}",
    "box{j} = Box({c})  # @inspect box{j}",
    "link(helper_{h})",
    "doc{j} = helper_{h}.__doc__  # @inspect doc{j}",
    "name{j} = helper_{h}.__name__  # @inspect name{j}",
    "s{j} = next(STREAM)  # @inspect s{j}",
    "names{j} = sorted(n for n in globals() if n.startswith('helper'))  # @inspect names{j}",
    "with open('log.txt', 'a') as file{j}:\n        file{j}.write('{c} ')",
    "lines{j} = open('log.txt').read().split() if os.path.exists('log.txt') else []  # @inspect lines{j}",
    "text('note {c}')",
    "print('section', {c}, len([{c}]))",
]


@dataclass(frozen=True)
class Lecture:
    """A lecture of sections built from PATTERNS, two helpers, a class whose repr calls a helper, a
    generator made at import; what an edit may add at the top level; its Russian catalog."""

    sections: tuple[tuple[tuple[int, int, int], ...], ...]
    factors: tuple[int, int]
    docs: tuple[str, str] = ("Helper zero.", "Helper one.")
    renamed: bool = False
    step: int = 1
    extras: frozenset[str] = frozenset()
    catalog: int = 0  # its version; 0: none

    def source(self) -> str:
        parts = ['import os\nimport random\n\nfrom cs336_lectures import link, text\n']
        if "constant" in self.extras:
            parts.append("\nLIMIT = 3\n")
        parts.append("\n\ndef main():\n" + "".join(f"    section_{i}()\n" for i in range(len(self.sections))))
        parts.append(f"\n\ndef counter():\n    n = 0\n    while True:\n        n += {self.step}\n        yield n\n"
                     "\n\nSTREAM = counter()\n"
                     "\n\nclass Box:\n    def __init__(self, size):\n        self.size = size\n\n"
                     "    def __repr__(self):\n        return f'Box<{helper_0(self.size)}>'\n")
        for index, body in enumerate(self.sections):
            parts.append(f"\n\ndef section_{index}():\n")
            for j, (pattern, constant, helper) in enumerate(body):
                parts.append("    " + PATTERNS[pattern].format(j=j, c=constant, h=helper) + "\n")
        for index, factor in enumerate(self.factors):
            name = f"helper_{index}" + ("_renamed" if self.renamed and index == 1 else "")
            parts.append(f'\n\ndef {name}(n):\n    """{self.docs[index]}"""\n    return n * {factor} + random.randint(0, 9)\n')
        if "shadow" in self.extras:
            parts.append("\n\ndef len(items):\n    return 7\n")
        if "extra" in self.extras:
            parts.append("\n\ndef extra():\n    return 1\n")
        return "".join(parts)

    def catalog_text(self) -> str:
        return ("language: ru\nsource: lec.py\nentries:\n"
                f"- en: note {self.catalog}\n  translation: заметка {self.catalog}\n  where: section_0\n")


pattern = st.tuples(st.integers(0, len(PATTERNS) - 1), st.integers(0, 9), st.integers(0, 1))
lectures = st.builds(Lecture, sections=st.lists(st.lists(pattern, min_size=1, max_size=3).map(tuple), min_size=2,
                                                max_size=4).map(tuple),
                     factors=st.tuples(st.integers(1, 9), st.integers(1, 9)))


@st.composite
def edited_lecture(draw, lecture: Lecture) -> Lecture:
    kind = draw(st.sampled_from(["constant", "constant", "insert", "delete", "helper", "docstring", "rename",
                                 "generator", "constant_statement", "shadow", "extra", "catalog"]))
    sections = [list(body) for body in lecture.sections]
    target = draw(st.integers(0, len(sections) - 1))
    if kind == "constant":
        position = draw(st.integers(0, len(sections[target]) - 1))
        chosen, _, helper = sections[target][position]
        sections[target][position] = (chosen, draw(st.integers(0, 9)), helper)
    elif kind == "insert":
        sections[target].insert(draw(st.integers(0, len(sections[target]))), draw(pattern))
    elif kind == "delete" and len(sections[target]) > 1:
        sections[target].pop(draw(st.integers(0, len(sections[target]) - 1)))
    elif kind == "helper":
        return replace(lecture, factors=(lecture.factors[0], draw(st.integers(1, 9))))
    elif kind == "docstring":
        return replace(lecture, docs=(lecture.docs[0], f"Helper one, edited {draw(st.integers(0, 99))}."))
    elif kind == "rename":
        return replace(lecture, renamed=not lecture.renamed)
    elif kind == "generator":
        return replace(lecture, step=lecture.step + 1)
    elif kind in ("constant_statement", "shadow", "extra"):
        name = kind.split("_")[0]
        return replace(lecture, extras=lecture.extras ^ {name})
    elif kind == "catalog":
        return replace(lecture, catalog=lecture.catalog + 1)
    return replace(lecture, sections=tuple(tuple(body) for body in sections))


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_generated_lectures_and_edits_are_served_as_fresh_runs(data, tmp_path_factory):
    """Whatever the kernel did with a chain of edits (resumed, resumed early, ran whole), its trace
    is the one a fresh run of the saved file writes."""
    folder = tmp_path_factory.mktemp("generated")
    previous = os.getcwd()
    os.chdir(folder)
    process = KernelProcess(Path("lec.py"), ["cs336-lectures", "trace", "lec.py"])
    try:
        lecture = data.draw(lectures)
        full = None
        for round in range(4):
            Path("lec.py").write_text(lecture.source())
            if lecture.catalog:
                catalog = folder / "locales" / "ru" / "lec.yaml"
                catalog.parent.mkdir(parents=True, exist_ok=True)
                catalog.write_text(lecture.catalog_text(), encoding="utf-8")
            files = {path: path.read_bytes() for path in folder.glob("*.txt")}
            reply = process.run(**LIMITS, full=full)
            assert reply is not None
            event(f"{reply['mode']}, {reply['state']}")
            restore(folder, files)
            produced = json.loads((process.out / "lec.json").read_text())
            difference = first_difference(comparable(produced), comparable(fresh_trace(folder / f"fresh-{round}")))
            assert difference is None, (difference, reply, lecture.source())
            following = data.draw(edited_lecture(lecture))
            # As the server does: a catalog's save runs the whole lecture (its texts are everywhere).
            full = note("the {language} translation changed", language="ru") if following.catalog != lecture.catalog else None
            lecture = following
    finally:
        process.close()
        os.chdir(previous)


# --- the shipped lectures, edited at random ----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]


@st.composite
def shipped_edit(draw, source: str) -> str:
    """An edit a lecture author makes: a text() changed, a line added to or removed from a section,
    a section's docstring-like first text reworded."""
    lines = source.splitlines(keepends=True)
    texts = [index for index, line in enumerate(lines) if line.startswith('    text("')]
    at = draw(st.sampled_from(texts))
    kind = draw(st.sampled_from(["reword", "add", "remove"]))
    if kind == "reword":
        lines[at] = lines[at].replace('text("', f'text("Edited {draw(st.integers(0, 99))}: ', 1)
    elif kind == "add":
        lines.insert(at, f'    text("An added line {draw(st.integers(0, 99))}.")\n')
    elif lines[at].rstrip().endswith(")"):  # a one-line text(): removing it leaves valid code
        del lines[at]
    return "".join(lines)


@pytest.mark.parametrize("name", ["lecture_01", "lecture_02"])
@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_random_edits_of_a_shipped_lecture_are_served_as_fresh_runs(name, data, tmp_path_factory, gpt2_cache):
    folder = tmp_path_factory.mktemp(name)
    previous = os.getcwd()
    os.chdir(folder)
    source = (ROOT / "lectures" / f"{name}.py").read_text()
    Path(f"{name}.py").write_text(source)
    process = KernelProcess(Path(f"{name}.py"), ["cs336-lectures", "trace", f"{name}.py"])
    try:
        assert process.run(**LIMITS)["state"] == "ok"
        for round in range(2):
            source = data.draw(shipped_edit(source))
            Path(f"{name}.py").write_text(source)
            reply = process.run(**LIMITS)
            event(f"{reply['mode']}: {reply.get('reason')}")
            produced = json.loads((process.out / f"{name}.json").read_text())
            fresh = fresh_trace(folder / f"fresh-{round}", f"{name}.py")
            difference = first_difference(comparable(produced), comparable(fresh))
            assert difference is None, (difference, reply)
    finally:
        process.close()
        os.chdir(previous)


# --- 8. what differs between a kernel's run and a new process -----------------------------------------

LOOKING = '''
import os
import sys
import threading


def main():
    first()
    second()


def first():
    plotting = "matplotlib" in sys.modules  # @inspect plotting
    threads = threading.active_count()  # @inspect threads
    leader = os.getpgid(0) == os.getpid()  # @inspect leader


def second():
    x = 1  # @inspect x
'''


def test_a_lecture_that_looks_at_its_own_process_is_traced_in_a_new_one(served):
    reply = served(LOOKING, LOOKING.replace("x = 1", "x = 2"))
    assert reply["mode"] == "full" and "looks at its own process (`sys.modules`)" in reply["reason"], reply
