"""Renaming locals of JavaScript/TypeScript functions: every use, and nothing that could change behaviour."""

from __future__ import annotations

import pytest

from reviewbench.mine.script_rename import rename_in_script_functions, script_function_spans

SOURCE = """\
const LIMIT = 3;

function sum(values, start) {
  let total = start;
  for (const value of values) {
    total += value;
  }
  return total;
}

const shorthand = (name) => {
  return { name };
};

function shadowed(item) {
  const doubled = [1].map((item) => item + 1);
  return doubled.concat(item);
}

function hoisted(items) {
  if (items) {
    var seen = items.length;
  }
  return seen;
}

function blockScoped(list) {
  if (list) {
    let count = list.length;
    return count;
  }
  return count;
}
"""


def test_every_use_of_a_local_and_its_parameters_is_renamed():
    renamed = rename_in_script_functions(SOURCE, "javascript", [6], "k")
    assert renamed is not None
    assert set(renamed.mapping) == {"values", "start", "total", "value"}
    lines = renamed.source.splitlines()
    new = renamed.mapping
    assert lines[3] == f"  let {new['total']} = {new['start']};"
    assert lines[5] == f"    {new['total']} += {new['value']};"
    assert lines[7] == f"  return {new['total']};"
    assert renamed.source.count("LIMIT") == 1 and lines[:2] == SOURCE.splitlines()[:2]


def test_a_shorthand_property_is_never_renamed():
    """``{ name }`` is the key "name" too: renaming the local would rename the key."""
    assert rename_in_script_functions(SOURCE, "javascript", [12], "k") is None


def test_a_name_declared_again_in_a_nested_function_is_left_alone():
    renamed = rename_in_script_functions(SOURCE, "javascript", [17], "k")
    assert renamed is not None and set(renamed.mapping) == {"doubled"}
    # The inner arrow's own parameter shadows the outer one: renaming it alone is safe.
    inner = rename_in_script_functions(SOURCE, "javascript", [16], "k")
    assert inner is not None and set(inner.mapping) == {"item"}
    assert inner.source.count("item") == SOURCE.count("item") - 2


def test_var_is_function_scoped_and_let_is_not():
    hoisted = rename_in_script_functions(SOURCE, "javascript", [24], "k", limit=None)
    assert hoisted is not None and "seen" in hoisted.mapping
    scoped = rename_in_script_functions(SOURCE, "javascript", [32], "k")
    # `count` after the block is another (global) count: renaming the block's would be wrong.
    assert scoped is None or "count" not in scoped.mapping


def test_the_same_rename_on_both_sides_with_a_mapping():
    first = rename_in_script_functions(SOURCE, "javascript", [6], "k")
    again = rename_in_script_functions(SOURCE.replace("total += value", "total -= value"), "javascript", [6], "x",
                                       mapping=first.mapping)  # fmt: skip
    assert again is not None and again.mapping == first.mapping


def test_typescript_parameter_properties_are_fields_and_keep_their_names():
    source = "class A {\n  constructor(private size: number, scale: number) {\n    this.n = size * scale;\n  }\n}\n"
    renamed = rename_in_script_functions(source, "typescript", [3], "k")
    assert renamed is not None and set(renamed.mapping) == {"scale"}


def test_a_function_that_reads_arguments_or_eval_is_not_renamed():
    source = "function f(a) {\n  return arguments[0] + a;\n}\n"
    assert rename_in_script_functions(source, "javascript", [2], "k") is None


def test_new_names_are_no_reserved_word():
    source = "function f(func) {\n  return func();\n}\n"
    renamed = rename_in_script_functions(source, "javascript", [2], "k")
    assert renamed is not None and renamed.mapping["func"] not in {"function", "class", "var"}


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_function_spans(language):
    spans = script_function_spans(SOURCE, language)
    assert (3, 9) in spans and (11, 13) in spans and (16, 16) in spans and (15, 18) in spans


def test_same_tokens_sees_a_change_anywhere_and_ignores_whitespace():
    from reviewbench.mine.script_rename import same_tokens

    source = "const a = 1;\n\nfunction f(x) {\n  return g(x, 2);\n}\n\nconst b = 2;\n"
    assert same_tokens(source, source.replace("g(x, 2)", "g(\n    x,\n    2\n  )"), "javascript")
    assert not same_tokens(source, source.replace("g(x, 2)", "g(x, 3)"), "javascript")
    assert not same_tokens(source, source.replace("const b = 2", "const b = 3"), "javascript")
    assert not same_tokens(source, source.replace("return g", "return;\n  g"), "javascript")
    # Renamed identifiers are expected exactly where the renames are.
    at = source.index("x)")
    renamed = source[:at] + "y" + source[at + 1 :]
    assert not same_tokens(source, renamed, "javascript")
    both = renamed.replace("g(x,", "g(y,")
    assert same_tokens(source, both, "javascript", {at: "y", source.index("g(x") + 2: "y"})
