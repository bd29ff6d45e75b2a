"""edits.py: which top-level functions an edit changed, and when an edit cannot be applied in place."""

from __future__ import annotations

from cs336_lectures.runtime.kernel.edits import Edit, Statement, compare, outline
from cs336_lectures.runtime.i18n.run_messages import note

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


def test_a_module_level_statement_added_or_removed_at_the_end_is_unsafe():
    """Nothing pairs with a statement past the last one the other version has: the count differs."""
    appended = compare(outline(BASE), outline(BASE + "\n\nTABLE = helper(1)\n"))
    assert str(appended.unsafe) == "module-level code changed (line 23)"
    removed = compare(outline(BASE + "\n\nTABLE = helper(1)\n"), outline(BASE))
    assert str(removed.unsafe) == "module-level code changed (line 23)"
    imported = compare(outline(BASE), outline(BASE + "\n\nimport math\n"))
    assert str(imported.unsafe) == "the imports changed"
    with_class = compare(outline(BASE), outline(BASE + "\n\nclass Box:\n    size = 1\n"))
    assert str(with_class.unsafe) == "class Box changed (classes are defined at import)"


def test_outline_reads_each_definition_and_statement():
    source = ('import os\n\nX = 1\n\n\n@decorator\ndef f(a: int = 1) -> int:\n    """Doc.\n    more"""\n    return a\n\n\n'
              'class C:\n    pass\n\n\ndef g():\n    pass\n\n\ndef g():\n    return 2\n')
    found = outline(source)
    f = found.functions["f"]
    assert (f.name, f.first, f.line, f.last, f.decorated) == ("f", 6, 7, 10, True)
    assert f.text == '@decorator\ndef f(a: int = 1) -> int:\n    """Doc.\n    more"""\n    return a'
    assert f.docstring == "Doc.\n    more"  # as written: the swap sets __doc__ to what a fresh import would
    assert found.functions["g"].first == 21 and found.functions["g"].decorated is False
    assert found.functions["g"].docstring is None
    assert found.statements == (Statement("import os", 1, 1, "import"), Statement("X = 1", 3, 3, "statement"),
                                Statement("class C:\n    pass", 13, 14, "class C"))
    assert found.duplicates == {"g"}


def test_each_unsafe_edit_names_the_function_and_keeps_what_changed():
    assert edit("import random", "import random, math") == Edit(frozenset(), note("the imports changed"))
    assert edit("    second()\n", "    second()\n    first()\n") == Edit(frozenset({"main", "first", "second", "helper"}),
                                                                  note("{entry}() changed", entry="main"))
    twice = BASE + "\n\ndef helper(n):\n    return n\n"
    assert compare(outline(BASE), outline(twice)) == Edit(frozenset({"helper"}), note("`{name}` is defined twice", name="helper"))
    assert compare(outline(twice), outline(BASE)).unsafe == note("`{name}` is defined twice", name="helper")
    decorated = BASE.replace("def helper(n):", "@staticmethod\ndef helper(n):")
    assert compare(outline(BASE), outline(decorated)) == Edit(
        frozenset({"helper"}), note("`{name}` is decorated (its decorator runs at import)", name="helper"))
    assert compare(outline(decorated), outline(BASE)).unsafe == note(
        "`{name}` is decorated (its decorator runs at import)", name="helper")
    assert edit("def helper(n):", "def helper(n) -> int:") == Edit(frozenset({"helper"}), note(
        "the parameters of `{name}` changed (defaults are evaluated at import)", name="helper"))
    annotated = BASE.replace("def helper(n):", "def helper(n) -> int:")
    assert compare(outline(annotated), outline(annotated.replace("-> int", "-> str"))).unsafe is not None
    keyword = compare(outline(BASE), outline(BASE + "\n\ndef extra(*, n=LIMIT):\n    return n\n"))
    assert keyword == Edit(frozenset({"extra"}), note("the new function `{name}` has defaults that are not literals",
                                                      name="extra"))


def test_a_new_function_with_literal_defaults_applies_in_place():
    added = compare(outline(BASE), outline(BASE + "\n\ndef extra(n=3, *, scale=-1.5, names=('a', None)):\n    return n\n"))
    assert added == Edit(frozenset({"extra"}))


# --- what code can reach: the kernel's rule for resuming (DEVELOPERS.md, "Which checkpoint") ---------

REACHING = '''import os

TABLE = {"sizes": sized([1, 2])}
CALLBACK = lambda: shown(1)


class Box:
    size = scale(2)

    def __repr__(self):
        return shown(self.size)


def main():
    first()
    second()
    third()


def first():
    box = Box()


def second():
    link(helper)


def third():
    names = globals()


def sized(items):
    return len(items)


def scale(n):
    return n


def shown(n):
    return str(n)


def helper():
    return os.getcwd()


if __name__ == "__main__":
    main()
'''


def test_the_import_reaches_what_module_level_code_and_class_bodies_name():
    reach = outline(REACHING)
    at_import = reach.at_import()
    assert {"sized", "scale", "shown"} <= at_import  # a lambda at module level may run there
    assert "main" not in at_import  # the __main__ block never runs when a lecture with main() is traced
    assert "helper" not in reach.reach(at_import)


def test_a_class_reaches_what_its_methods_name():
    reach = outline(REACHING)
    assert "shown" in reach.reach({"first"}) and "Box" in reach.reach({"first"})
    assert "helper" not in reach.reach({"first"})


def test_main_reaches_the_sections_called_before_a_line():
    reach = outline(REACHING)
    lines = REACHING.splitlines()
    third = lines.index("    third()") + 1
    before = reach.entry_names_before(third)
    assert {"first", "second"} <= before and "third" not in before
    assert {"helper", "os", "getcwd"} <= reach.reach(before) and "globals" not in reach.reach(before)
    assert "globals" in reach.reach(reach.entry_names_before(third + 1))


def test_names_are_global_names_not_locals():
    reach = outline("def main():\n    first()\n\n\ndef first():\n    helper = 1\n    return helper\n\n\ndef helper():\n    pass\n")
    assert "helper" not in reach.reach({"first"})
