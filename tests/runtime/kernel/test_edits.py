"""edits.py: which top-level functions an edit changed, and when an edit cannot be applied in place."""

from __future__ import annotations

from cs336_lectures.runtime.kernel.edits import compare, outline

BASE = '''import random

LIMIT = 3


def main():
    first()
    second()


def first():
    x = random.random()  # @inspect x


def second():
    y = helper(2)  # @inspect y


def helper(n):
    return n * 10
'''


def edit(old: str, new: str):
    return compare(outline(BASE), outline(BASE.replace(old, new)))


def test_a_changed_body_names_only_its_function():
    result = edit("n * 10", "n * 11")
    assert result.changed == {"helper"} and result.unsafe is None


def test_a_comment_is_a_change_since_it_may_carry_a_directive():
    result = edit("y = helper(2)  # @inspect y", "y = helper(2)  # @inspect y @stepover")
    assert result.changed == {"second"} and result.unsafe is None


def test_a_function_that_moved_counts_as_changed():
    result = edit("    x = random.random()  # @inspect x\n", "    x = random.random()  # @inspect x\n    x += 1\n")
    assert result.changed == {"first", "second", "helper"} and result.unsafe is None


def test_identical_sources_change_nothing():
    assert compare(outline(BASE), outline(BASE)).changed == frozenset()


def test_new_and_removed_functions_are_changes():
    added = compare(outline(BASE), outline(BASE + "\n\ndef extra():\n    return 1\n"))
    assert added.changed == {"extra"} and added.unsafe is None
    removed = compare(outline(BASE + "\n\ndef extra():\n    return 1\n"), outline(BASE))
    assert removed.changed == {"extra"} and removed.unsafe is None


def test_unsafe_edits_say_why():
    assert str(edit("import random", "import random, math").unsafe) == "the imports changed"
    assert str(edit("LIMIT = 3", "LIMIT = 4").unsafe).startswith("module-level code changed")
    assert str(edit("    second()\n", "    second()\n    first()\n").unsafe) == "main() changed"
    assert "parameters of `helper`" in str(edit("def helper(n):", "def helper(n=2):").unsafe)
    decorated = BASE.replace("def helper(n):", "@staticmethod\ndef helper(n):")
    assert "decorated" in str(compare(outline(decorated), outline(decorated.replace("n * 10", "n * 12"))).unsafe)
    with_class = BASE + "\n\nclass Box:\n    size = 1\n"
    assert "class Box changed" in str(compare(outline(with_class), outline(with_class.replace("size = 1", "size = 2"))).unsafe)
    computed = compare(outline(BASE), outline(BASE + "\n\ndef extra(n=LIMIT):\n    return n\n"))
    assert "defaults that are not literals" in str(computed.unsafe)
