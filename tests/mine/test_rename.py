"""Scope-aware renames, and rename variants that keep their defect."""

from __future__ import annotations

import re
import types

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.rename import rename_in_functions
from reviewbench.mine.textdiff import line_map
from reviewbench.mine.variants import ANY, parameter_rule
from reviewbench.validate import validate_corpus

from .conftest import SHAPES, apply_in_clone, validate_config

SCOPES = '''\
import types

LIMIT = 3


def outer(items, factor=2):
    total = 0
    for item in items:
        total += item * factor
    helper = lambda x: x + total
    squares = [item * item for item in items]

    def inner():
        return total + LIMIT

    record = types.SimpleNamespace(total=total)
    record.total = total
    return helper(1), squares, inner(), record.total


def introspective():
    value = 1
    return locals()


def declares():
    global LIMIT
    count = LIMIT
    return count
'''


def test_rename_touches_only_the_functions_own_locals():
    renamed = rename_in_functions(SCOPES, [8], "seed")
    assert renamed is not None
    mapping = renamed.mapping
    assert set(mapping) == {"total", "item", "helper", "squares", "record"}
    source = renamed.source
    assert "def outer(items, factor=2):" in source  # parameters keep their names
    assert "LIMIT" in source and "def inner():" in source  # globals and nested defs too
    assert f"SimpleNamespace(total={mapping['total']})" in source  # keyword names are not variables
    assert f"{mapping['record']}.total = {mapping['total']}" in source  # nor are attributes
    assert f"return {mapping['total']} + LIMIT" in source  # the closure follows the rename
    assert "[item * item for item in items]" in source  # the comprehension has its own scope
    assert len(source.splitlines()) == len(SCOPES.splitlines())
    # Behaviour is unchanged.
    before, after = {}, {}
    exec(SCOPES, before)  # noqa: S102 - our own snippet
    exec(source, after)  # noqa: S102
    assert before["outer"]([1, 2]) == after["outer"]([1, 2])


def test_functions_reading_their_locals_by_name_are_left_alone():
    line = {text: n for n, text in enumerate(SCOPES.splitlines(), start=1)}
    assert rename_in_functions(SCOPES, [line["    return locals()"]], "seed") is None
    assert rename_in_functions(SCOPES, [line["    count = LIMIT"]], "seed") is None  # global declared
    assert rename_in_functions(SCOPES, [line["LIMIT = 3"]], "seed") is None  # module level


def test_rename_is_deterministic_for_a_key():
    assert rename_in_functions(SCOPES, [8], "a") == rename_in_functions(SCOPES, [8], "a")


def _changed(patch) -> int:
    return sum(1 for line in patch.read_text().splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---")))  # fmt: skip


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def test_mutation_variants_keep_the_defect_and_follow_the_rename(project, tmp_path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, fixes=False, mutations=7, rename=True, controls_ratio=0), out,
                warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    gold = {g.case_id: g for g in corpus.gold}
    cases = {c.case_id: c for c in corpus.cases}
    variants = [g for g in corpus.gold if g.variant_of]
    assert len(variants) >= 5  # functions without locals (clamp, window) have none
    for number, variant in enumerate(variants):
        original = gold[variant.variant_of]
        assert variant.stratum == original.stratum == "mutation"
        assert variant.case_id != original.case_id
        assert cases[variant.case_id].base == cases[original.case_id].base
        assert variant.defects[0].defect_class == original.defects[0].defect_class
        one = apply_in_clone(project.path, cases[original.case_id].base, out / cases[original.case_id].patch,
                             tmp_path / f"o{number}")  # fmt: skip
        vcase = cases[variant.case_id]
        assert vcase.base_patch is not None and cases[original.case_id].base_patch is None
        two = apply_in_clone(project.path, vcase.base, out / vcase.patch, tmp_path / f"v{number}",
                             base_patch=out / vcase.base_patch)  # fmt: skip
        # The variant's patch is the defect alone, in renamed code: as many changed lines as
        # the original's, none of them a rename.
        assert _changed(out / vcase.patch) == _changed(out / cases[original.case_id].patch)
        (loc_one,), (loc_two,) = original.defects[0].locations, variant.defects[0].locations
        text_one = (one / loc_one.path).read_text()
        text_two = (two / loc_two.path).read_text()
        assert text_one != text_two  # the variant's code is renamed
        # Gold lines are recomputed in the variant's tree and hold the renamed defect.
        lines = line_map(text_one, text_two)
        assert (loc_two.start_line, loc_two.end_line) == (lines[loc_one.start_line], lines[loc_one.end_line])
        span_one = text_one.splitlines()[loc_one.start_line - 1 : loc_one.end_line]
        span_two = text_two.splitlines()[loc_two.start_line - 1 : loc_two.end_line]
        assert len(span_one) == len(span_two)
        # The symbol follows a renamed function name (issue 15: names with their callers).
        assert f"def {loc_two.symbol.split('.')[-1]}(" in text_two
        assert (loc_two.symbol == loc_one.symbol) == (f"def {loc_one.symbol.split('.')[-1]}(" in text_two)
        assert _words(" ".join(variant.defects[0].symbols)) - _words(text_two) == set()
    validate_corpus(out, validate_config())
    validated = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    for variant in variants:
        assert validated[variant.case_id] == validated[variant.variant_of]
    assert sum(validated[v.case_id] == "observed" for v in variants) >= 4


def test_fix_reversal_variant_keeps_the_reintroduced_bug(project, tmp_path):
    buggy = SHAPES.replace("    acc = 0\n    for v in values:\n        if v is None:\n            continue\n",
                           "    acc = 0\n    for v in values:\n")  # fmt: skip
    project.commit("Count everything", {"pkg/shapes.py": buggy})
    project.commit("Fix total with missing values", {"pkg/shapes.py": SHAPES})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, rename=True, controls_ratio=0), out, warn=lambda _m: None)
    corpus = read_corpus(out)
    (original,) = [g for g in corpus.gold if not g.variant_of]
    (variant,) = [g for g in corpus.gold if g.variant_of]
    assert variant.variant_of == original.case_id and variant.stratum == "fix_reversal"
    assert variant.provenance == original.provenance
    case = next(c for c in corpus.cases if c.case_id == variant.case_id)
    assert case.base_patch is not None
    patched = apply_in_clone(project.path, case.base, out / case.patch, tmp_path / "v",
                             base_patch=out / case.base_patch) / "pkg/shapes.py"  # fmt: skip
    text = patched.read_text()
    assert "    acc = 0" not in text  # `acc` was renamed in `total`, the function the fix touched
    renamed_total = re.search(r"^def (\w+)\(\w+\):", text, re.M).group(1)  # and `total` itself, with its callers
    original_case = next(c for c in corpus.cases if c.case_id == original.case_id)
    assert _changed(out / case.patch) == _changed(out / original_case.patch)
    assert "acc" not in (out / case.patch).read_text().replace("accumul", "")  # no rename noise in the diff
    (location,) = variant.defects[0].locations
    assert location.symbol in ("total", renamed_total) and f"def {location.symbol}(" in text
    validate_corpus(out, validate_config())
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    assert statuses == {original.case_id: "observed", variant.case_id: "observed"}


def test_no_variant_without_a_local_to_rename(git_repo, tmp_path):
    repo = git_repo("nolocals")
    # Its parameters are passed by keyword somewhere, so they cannot be renamed either, nor
    # can its own name, which the package exports by name.
    repo.commit("init", {"pkg/m.py": "def less(a, b):\n    return a < b\n", "pkg/use.py": "X = less(a=1, b=2)\n",
                         "pkg/__init__.py": "__all__ = ['less']\n"})  # fmt: skip
    out = tmp_path / "corpus"
    warnings: list[str] = []
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=1, rename=True, controls_ratio=0), out,
                warn=warnings.append)  # fmt: skip
    assert len(read_corpus(out).gold) == 1
    assert any("got no rename variant (no_safe_name 1)" in w for w in warnings)


def test_a_use_before_the_assignment_is_renamed_with_it_or_the_name_is_left_alone():
    """Regression: libcst links a use only to assignments above it, so a use that comes
    first (a loop-carried name, a closure, or a swapped statement in a mutant) kept the
    old name while its assignment got the new one: a different program, a different
    defect. A rename must compile to the same code, names aside."""
    sources = [
        # a swapped statement (statement_swap mutant): the use now precedes the assignment
        "def f(op):\n    label = f'__{name}__'\n    name = op.__name__\n    total = len(label)\n    return total\n",
        # a loop-carried name, read before its only assignment
        "def g(xs):\n    out = []\n    for i, x in enumerate(xs):\n        if i:\n            out.append(last)\n"
        "        last = x\n    return out\n",
        # a closure defined before the name is assigned
        "def h(xs):\n    def get():\n        return count\n    count = len(xs)\n    return get()\n",
    ]
    for source in sources:
        renamed = rename_in_functions(source, [2], "k")
        if renamed is None:
            continue
        before, after = compile(source, "<a>", "exec"), compile(renamed.source, "<b>", "exec")
        (old,) = [c for c in before.co_consts if isinstance(c, types.CodeType)]
        (new,) = [c for c in after.co_consts if isinstance(c, types.CodeType)]
        # No local became a global read (an unrenamed use would), and the bytecode is the same.
        assert new.co_names == old.co_names, (source, renamed.source)
        assert new.co_code == old.co_code
        assert len(new.co_varnames) == len(old.co_varnames)
    # Names whose every use follows the assignment are still renamed.
    renamed = rename_in_functions(sources[0], [2], "k")
    assert renamed is not None and "total" not in renamed.source


PARAMS = '''\
def scale(values, factor, *rest, **options):
    out = [v * factor for v in values]
    return out, rest, options


def offset(values, delta):
    return [v + delta for v in values]


def use():
    return scale([1], 2), offset([1], delta=3)
'''


def test_parameters_are_renamed_only_when_no_call_names_them():
    # `offset(..., delta=3)` names `delta`; `other(values=...)` names another function's `values`.
    rule = parameter_rule(frozenset({("offset", "delta"), ("other", "values")}))
    renamed = rename_in_functions(PARAMS, [2, 7], "p", params=rule)
    assert renamed is not None
    assert {"values", "factor", "rest", "options"} <= set(renamed.mapping)
    assert "def offset(" in renamed.source and "delta)" in renamed.source  # a keyword-named parameter stays
    before, after = {}, {}
    exec(PARAMS, before)  # noqa: S102 - our own snippet
    exec(renamed.source, after)  # noqa: S102
    assert before["use"]() == after["use"]()
    assert "values" in {k for k in renamed.mapping}  # named only for another function
    # A keyword passed to an unknown callee (partial(f, values=...)) blocks it everywhere;
    # methods called through their class are blocked by any keyword of that name.
    strict = parameter_rule(frozenset({(ANY, "values"), ("Widget", "size")}))
    assert not strict("scale", "values") and strict("scale", "factor")
    assert not strict("__init__", "size") and strict("resize", "size")
    # Without the predicate parameters keep their names, as before.
    plain = rename_in_functions(PARAMS, [2], "p")
    assert plain is not None and "def scale(values, factor, *rest, **options):" in plain.source


def test_a_variant_renames_parameters_and_keeps_the_defect_alone(git_repo, tmp_path):
    repo = git_repo("params")
    repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": "def less(a, b):\n    return a < b\n",
                         "tests/test_m.py": "from pkg.m import less\n\n\ndef test_less():\n    assert less(1, 2)\n"})  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=1, rename=True, controls_ratio=0), out,
                warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    (variant,) = [g for g in corpus.gold if g.variant_of]
    cases = {c.case_id: c for c in corpus.cases}
    vcase, ocase = cases[variant.case_id], cases[variant.variant_of]
    assert _changed(out / vcase.patch) == _changed(out / ocase.patch) == 2
    base_patch = (out / vcase.base_patch).read_text()
    assert "-def less(a, b):" in base_patch and "+def less(a, b):" not in base_patch  # parameters renamed silently
    assert "def less(a, b)" not in (out / vcase.patch).read_text()


def test_the_files_context_of_a_variant_shows_the_renamed_code(project, tmp_path):
    from reviewbench.review.packet import PacketBuilder

    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, mirrors=False, fixes=False, mutations=3, rename=True, controls_ratio=0), out,
                warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    cases = {c.case_id: c for c in corpus.cases}
    variant = next(g for g in corpus.gold if g.variant_of)
    vcase = cases[variant.case_id]
    expected = apply_in_clone(project.path, vcase.base, out / vcase.patch, tmp_path / "v",
                              base_patch=out / vcase.base_patch)  # fmt: skip
    builder = PacketBuilder(out, project.path)
    try:
        packet = builder.packet(vcase, "prompt", None, "files")
    finally:
        builder.close()
    for path, text in packet.files.items():
        assert text == (expected / path).read_text()  # renamed base + defect, not the original names
    assert packet.diff == (out / vcase.patch).read_text()  # the rename itself is never shown as a change
