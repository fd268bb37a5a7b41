"""The enclosing-symbol lookup agrees with Python's own parser, line by line."""

from __future__ import annotations

import ast

import pytest

from reviewbench.mine.symbols import SymbolIndex, identifiers

SOURCE = '''\
import os

CONSTANT = call(
    1,
)


def top(a, b):
    """Docstring."""
    total = a + b
    if total > 3:
        return (
            total
        )
    return total


class Shape:
    sides = 0

    def __init__(self, n):
        self.n = n

    @property
    def area(self):
        def helper(x):
            return x * 2

        return helper(self.n)

    @staticmethod
    @other(
        1
    )
    async def build(size):
        # comment at a shallower level
        async with lock:
            return Shape(size)


def after(
    x,
):
    pass
'''


def _reference(text: str) -> dict[int, str | None]:
    """Innermost def/class (decorators included) per line, from ast."""
    spans = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((start, child.end_lineno, name))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(text), "")
    out = {}
    for line in range(1, len(text.splitlines()) + 1):
        inside = [s for s in spans if s[0] <= line <= s[1]]
        out[line] = max(inside, key=lambda s: s[0])[2] if inside else None
    return out


def test_python_lookup_matches_ast_on_every_non_blank_line():
    index = SymbolIndex(SOURCE, "python")
    reference = _reference(SOURCE)
    lines = SOURCE.splitlines()
    mismatches = [(n, lines[n - 1], index.at(n), want) for n, want in reference.items()
                  if lines[n - 1].strip() and index.at(n) != want]  # fmt: skip
    assert mismatches == []


def test_python2_files_still_get_symbols():
    text = "class Old:\n    def run(self):\n        print 'hi'\n        return 1\n"
    assert SymbolIndex(text, "python").at(3) == "Old.run"


@pytest.mark.parametrize("language, text, line, expected", [
    ("go", "package a\n\nfunc (s *S) Run(x int) int {\n\treturn x\n}\n", 4, "Run"),
    ("javascript", "export async function load(url) {\n  return fetch(url);\n}\n", 2, "load"),
    ("rust", "pub fn parse(s: &str) -> u32 {\n    s.len() as u32\n}\n", 2, "parse"),
    ("java", "class A {\n  public static int size(int n) {\n    return n;\n  }\n}\n", 3, "size"),
])  # fmt: skip
def test_other_languages_best_effort(language, text, line, expected):
    assert SymbolIndex(text, language).at(line) == expected


def test_identifiers_skip_keywords_and_short_names():
    assert identifiers(["if self.count <= limit: return None", "while True: pass"]) == {"count", "limit"}


@pytest.mark.parametrize("language", ["python", "go", None])
def test_an_empty_file_has_no_symbol(language):
    assert SymbolIndex("", language).at(1) is None
    assert SymbolIndex("\n\n", language).at(2) is None


def test_identifiers_come_from_code_not_comments_strings_or_docstrings():
    """A reviewer quoting a word of a comment or docstring must not identify a defect."""
    lines = [
        "# __missing__ may not store item",
        "value = cache.lookup(key)  # only when accessed",
        'message = "returns itself unchanged"',
        '    """Return the stored thing.',
        "",
        "    Arguments are positional here.",
        '    """',
        "    total = compute(values) // divisor",
        "    label = f'{prefix}-x'",
    ]
    assert identifiers(lines, "python") == {"value", "cache", "lookup", "message", "total", "compute", "values",
                                            "divisor", "label"}  # fmt: skip
    assert identifiers(["int count = limit; // counts every item", 'log("store this")'], "c") == {"count", "limit"}
    # A one-line docstring and a string with an escaped quote.
    assert identifiers(['"""Summary words here."""', 'text = "say \\"hello\\" again"'], "python") == {"text"}
