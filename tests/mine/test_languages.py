"""Every language behind one interface: enclosing symbols and code-only identifiers.

The shared tests run each registered language on its own ``examples()``; the JS/TS tests
below pin the shapes of definition the issue found missed or mislabelled on real code.
"""

from __future__ import annotations

import pytest

from reviewbench.mine.languages import examples_of, language_for, registry
from reviewbench.mine.symbols import SymbolIndex, identifiers

LANGUAGES = registry()


def _symbol_cases():
    for name, language in LANGUAGES.items():
        for number, (source, expected) in enumerate(examples_of(language).symbols):
            yield pytest.param(language, source, expected, id=f"{name}-{number}")


def _identifier_cases():
    for name, language in LANGUAGES.items():
        for number, (lines, expected) in enumerate(examples_of(language).identifiers):
            yield pytest.param(language, lines, expected, id=f"{name}-{number}")


def _uncommented_cases():
    for name, language in LANGUAGES.items():
        for number, (lines, expected) in enumerate(examples_of(language).uncommented):
            yield pytest.param(language, lines, expected, id=f"{name}-{number}")


def test_python_javascript_and_typescript_are_registered():
    assert {"python", "javascript", "typescript"} <= {n for lang in LANGUAGES.values() for n in lang.names}


@pytest.mark.parametrize(("language", "source", "expected"), list(_symbol_cases()))
def test_language_finds_its_example_symbols(language, source, expected):
    lookup = language().symbols(source)
    assert {line: lookup(line) for line in expected} == expected


@pytest.mark.parametrize(("language", "lines", "expected"), list(_identifier_cases()))
def test_language_finds_its_example_identifiers(language, lines, expected):
    assert identifiers(lines, language.names[0]) == expected


@pytest.mark.parametrize(("language", "lines", "expected"), list(_uncommented_cases()))
def test_language_drops_comments_of_its_examples_and_keeps_code(language, lines, expected):
    assert language().uncommented(lines) == list(expected)


def test_every_language_has_uncommented_examples():
    assert all(examples_of(language).uncommented for language in LANGUAGES.values())


def test_unknown_and_missing_languages_fall_back_to_the_generic_one():
    assert language_for(None).names == language_for("cobol").names == language_for("go").names


JS = """\
'use strict';

var utils = require('./utils');

/**
 * Parses a query string.
 * @param {string} str the input
 */
var parseValues = function parseQueryStringValues(str, options) {
    var obj = {};
    return obj;
};

const isArrow = (value) => {
    return Array.isArray(value);
};

function plain(a) {
    if (a) {
        return a;
    }
}

exports.merge = function (target, source) {
    return target;
};

module.exports = function (str) {
    return str;
};

Foo.prototype.bar = function () {
    return 1;
};

module.exports = {
    stringify: function (object) {
        return String(object);
    },
    parse(str) {
        return str;
    },
    short: (x) => x
};

class Stack extends Base {
    static create() {
        return new Stack();
    }

    #secret() {
        return 2;
    }

    field = () => {
        return 3;
    };
}
"""


@pytest.mark.parametrize(("line", "expected"), [
    (1, None), (3, None),
    (5, None), (7, None), (8, None),  # a JSDoc above a function is not inside it
    (9, "parseValues"), (10, "parseValues"), (12, "parseValues"),
    (14, "isArrow"), (15, "isArrow"), (16, "isArrow"),
    (18, "plain"), (20, "plain"), (22, "plain"),
    (24, "merge"), (25, "merge"),
    (28, "module.exports"), (29, "module.exports"),
    (32, "Foo.bar"), (33, "Foo.bar"),
    (37, "stringify"), (38, "stringify"), (40, "parse"), (41, "parse"), (43, "short"),
    (46, "Stack"), (47, "Stack.create"), (48, "Stack.create"), (51, "Stack.#secret"),
    (55, "Stack.field"), (56, "Stack.field"),
])  # fmt: skip
def test_javascript_definitions_of_every_common_shape(line, expected):
    assert SymbolIndex(JS, "javascript").at(line) == expected


def test_a_named_function_exported_as_the_module_is_called_by_its_name():
    """jshttp/mime-types' ``mimeScore.js``: ``module.exports = function mimeScore (…)`` is
    what its module, its callers and a reviewer call ``mimeScore`` (hand check, issue 29);
    an anonymous one stays ``module.exports``, a named one bound to a name keeps the binding."""
    text = ("module.exports = function mimeScore (mimeType) {\n  return 0\n}\n"
            "exports.other = function inner () {\n  return 1\n}\n"
            "module.exports.Klass = class Named {\n  m () {}\n}\n")  # fmt: skip
    index = SymbolIndex(text, "javascript")
    assert [index.at(n) for n in (1, 2, 4, 5, 7, 8)] == ["mimeScore", "mimeScore", "other", "other", "Klass", "Klass.m"]


TS = """\
const SCRIPT_RE = /^[\\s\\0]*(blob|data|javascript|vbscript):$/i;

/**
 * Checks a protocol.
 */
export function isScriptProtocol(protocol?: string): boolean {
  return !!protocol && SCRIPT_RE.test(protocol);
}

export const withBase = <T extends string>(input: T, base = ""): T => {
  return input;
};

export type Options = {
  strict: boolean;
};

export class Router<T> implements Handler {
  private routes: Map<string, T> = new Map();

  public add(path: string, value: T): void {
    this.routes.set(path, value);
  }

  get size(): number {
    return this.routes.size;
  }
}

export default function (input: string) {
  return input;
}
"""


@pytest.mark.parametrize(("line", "expected"), [
    (1, None),  # a module-level constant is in no function (was labelled isScriptProtocol)
    (3, None), (5, None),  # the JSDoc's end is not the next function (was)
    (6, "isScriptProtocol"), (7, "isScriptProtocol"), (8, "isScriptProtocol"),
    (10, "withBase"), (11, "withBase"),
    (15, "Options"),
    (18, "Router"), (19, "Router"), (21, "Router.add"), (22, "Router.add"),
    (26, "Router.size"),
    (30, "default"), (31, "default"),  # an anonymous default export is the module's default
])  # fmt: skip
def test_typescript_definitions_and_not_the_nearest_one_above(line, expected):
    assert SymbolIndex(TS, "typescript").at(line) == expected


def test_tsx_parses_when_plain_typescript_cannot():
    source = "export function Button(props: Props) {\n  return <button onClick={props.go}>Go</button>;\n}\n"
    assert SymbolIndex(source, "typescript").at(2) == "Button"


def test_javascript_with_jsx():
    source = "function App() {\n  return <div className=\"x\">{name}</div>;\n}\n"
    assert SymbolIndex(source, "javascript").at(2) == "App"


@pytest.mark.parametrize("language", ["javascript", "typescript"])
def test_an_empty_or_broken_script_still_answers(language):
    assert SymbolIndex("", language).at(1) is None
    assert SymbolIndex("function ok(a) {\n  return a;\n}\n\nfunction broken( {\n", language).at(2) == "ok"


def test_javascript_identifiers_come_from_code_only():
    """JSDoc prose, block comments, strings and template text are not code (issue: `Created`,
    `avoid`, `param` were taken as identifiers)."""
    lines = [
        "/**",
        " * Created to avoid a copy.",
        " * @param {string} input the raw value",
        " */",
        "const result = parse(input, { depth: options.depth }); // keeps depth",
        "const message = `Created ${count} items for ${user.name}`;",
        "const quoted = 'avoid this' + \"and that\";",
        "if (/whatever pattern/.test(value)) { return fallback; }",
        "total = ratio / divisor / factor;",
    ]
    assert identifiers(lines, "javascript") == {
        "result", "parse", "input", "depth", "options", "message", "count", "user", "name", "quoted",
        "test", "value", "fallback", "total", "ratio", "divisor", "factor",
    }  # fmt: skip


def test_a_hunk_that_starts_inside_a_block_comment():
    lines = ["   * continues the comment about widgets", "   */", "  widgets.push(entry);"]
    assert identifiers(lines, "typescript") == {"widgets", "push", "entry"}


def test_python_identifiers_unchanged_by_the_interface():
    assert identifiers(["value = cache.lookup(key)  # only when accessed"], "python") == {"value", "cache",
                                                                                         "lookup"}  # fmt: skip


def test_a_binding_of_an_immediately_invoked_function_is_named_by_the_binding():
    """qs's ``var hexTable = (function () { … }());``: the hand check's one miss."""
    source = ("var hexTable = (function () {\n    var array = [];\n    return array;\n}());\n\n"
              "const other = (() => {\n  return 1;\n})();\n\nconst value = compute(function () {\n  return 2;\n});\n")
    index = SymbolIndex(source, "javascript")
    assert [index.at(n) for n in (1, 2, 4, 7, 11)] == ["hexTable", "hexTable", "hexTable", "other", None]
