"""Rename variants reach functions without locals and module-level code (issue 15, item 5),
and ``mine`` says why a defect case got none."""

from __future__ import annotations

import json
import random
import re

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.edits import FileEdit
from reviewbench.mine.identifiers import Owners, rename_identifier, touched_names
from reviewbench.mine.rename import rename_in_functions
from reviewbench.mine.textdiff import file_diff
from reviewbench.mine.variants import NoVariant, _renamed_both
from reviewbench.validate import validate_corpus

from .conftest import apply_in_clone, validate_config

NOBODY = Owners(frozenset(), frozenset(), frozenset())


def _changed(text: str) -> int:
    return sum(1 for line in text.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))


CALC = "def is_small(value):\n    return value < 10\n\n\ndef describe(number):\n    return 'small' if is_small(number) else 'big'\n"
TEST_CALC = '''\
from pkg.calc import describe, is_small


def test_is_small():
    assert is_small(value=3)
    assert not is_small(value=10)
    assert describe(3) == "small"
'''


def test_a_function_without_locals_is_renamed_with_its_callers(git_repo, tmp_path):
    repo = git_repo("calls")
    # `value` is passed by keyword, so the parameter keeps its name: only the function's own
    # name, with every caller in the repository (tests included), can change.
    # A mention in prose no test runs (a changelog) is left as it is and does not stop it.
    repo.commit("init", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/test_calc.py": TEST_CALC,
                         "CHANGES.rst": "Added ``is_small``.\n"})  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=1, paths=("pkg/calc.py",),
                           operators=("boundary_flip",), rename=True, controls_ratio=0), out,
                warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    (variant,) = [g for g in corpus.gold if g.variant_of]
    cases = {c.case_id: c for c in corpus.cases}
    vcase, ocase = cases[variant.case_id], cases[variant.variant_of]
    patch, base_patch = (out / vcase.patch).read_text(), (out / vcase.base_patch).read_text()
    assert _changed(patch) == _changed((out / ocase.patch).read_text()) == 2
    new = re.search(r"^\+def (\w+)\(value\):", base_patch, re.M).group(1)
    assert new != "is_small" and "is_small" not in patch
    assert "b/tests/test_calc.py" in base_patch and f"import describe, {new}" in base_patch  # callers follow
    assert vcase.paths == ocase.paths == ["pkg/calc.py"]  # the reviewer sees the defect's file only
    tree = apply_in_clone(repo.path, vcase.base, out / vcase.patch, tmp_path / "v", base_patch=out / vcase.base_patch)
    assert not re.search(r"\bis_small\b", (tree / "pkg/calc.py").read_text() + (tree / "tests/test_calc.py").read_text())
    (location,) = variant.defects[0].locations
    assert location.symbol == new
    validate_corpus(out, validate_config())
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    assert statuses[variant.case_id] == statuses[variant.variant_of] == "observed"


def test_a_module_level_defect_renames_the_private_name_it_binds(git_repo, tmp_path):
    repo = git_repo("module")
    good = "_LIMIT = 10\n\n\ndef is_small(value):\n    return value < _LIMIT\n"
    test = "from pkg.calc import is_small\n\n\ndef test_limit():\n    assert not is_small(value=50)\n"
    repo.commit("init", {"pkg/__init__.py": "", "pkg/calc.py": good.replace("10", "100"), "tests/test_calc.py": test})
    repo.commit("Fix the limit", {"pkg/calc.py": good})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, rename=True, controls_ratio=0), out, warn=lambda _m: None)
    corpus = read_corpus(out)
    (variant,) = [g for g in corpus.gold if g.variant_of]
    vcase = next(c for c in corpus.cases if c.case_id == variant.case_id)
    patch = (out / vcase.patch).read_text()
    assert _changed(patch) == 2 and "_LIMIT" not in patch
    assert re.search(r"^-_LIMIT = 10$", patch, re.M) is None and re.search(r"^\+_[A-Z_]+ = 100$", patch, re.M)
    validate_corpus(out, validate_config())
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    assert statuses[variant.case_id] == statuses[variant.variant_of] == "observed"


def test_mine_counts_why_defect_cases_got_no_variant(git_repo, tmp_path, cli):
    repo = git_repo("reasons")
    # `less`: no local, parameters passed by keyword, and exported by name: no safe name.
    repo.commit("init", {"pkg/__init__.py": "__all__ = ['less']\n", "pkg/m.py": "def less(a, b):\n    return a < b\n",
                         "pkg/use.py": "from pkg.m import less\n\nX = less(a=1, b=2)\n",
                         "pkg/version.py": "__version__ = '1.0'\n"})  # fmt: skip
    repo.commit("Fix the version", {"pkg/version.py": "__version__ = '1.1'\n"})  # module level, a dunder
    out = tmp_path / "corpus"
    mined = cli("mine", repo.path, "--out", out, "--mutations", "1", "--paths", "pkg/m.py", "--rename", "--controls-ratio",
                "0", "--json")
    assert mined.code == 0, mined.stderr
    made = json.loads(mined.stdout)["made_at_head"]
    assert made["rename_variants"] == 0 and made["variants_skipped"] == 2
    assert made["variants_skipped_by"] == {"outside_functions": 1, "no_safe_name": 1}
    human = cli("mine", repo.path, "--out", tmp_path / "again", "--mutations", "1", "--paths", "pkg/m.py", "--rename",
                "--controls-ratio", "0")
    assert human.code == 0, human.stderr
    rows = {" ".join(p for p in line.split() if p != "│") for line in human.stdout.splitlines()}
    assert "none: no_safe_name 1 1/2" in rows and "none: outside_functions 1 1/2" in rows, human.stdout
    assert "variant 0 0/2" in rows, human.stdout


def test_a_reassigned_parameter_is_renamed_with_its_assignments():
    source = "def prep(key):\n    if isinstance(key, str):\n        key = key.encode()\n    return key\n"
    renamed = rename_in_functions(source, [3], "k", params=lambda _f, _p: True)
    assert renamed is not None and "key" in renamed.mapping
    assert "key" not in renamed.source
    before, after = {}, {}
    exec(source, before)  # noqa: S102 - our own snippet
    exec(renamed.source, after)  # noqa: S102
    assert before["prep"]("a") == after["prep"]("a") == b"a"
    # A parameter some caller names stays, with its reassignment.
    assert rename_in_functions(source, [3], "k", params=lambda _f, _p: False) is None


def test_an_identifier_is_renamed_only_where_every_use_is_ours():
    lib = "def sign(x):\n    return x\n\n\nclass Key:\n    def sign(self, x):\n        return sign(x)\n"
    ours = {"lib.py": lib, "use.py": "from lib import sign, Key\n\n\ndef f(k: Key):\n    return Key().sign(1) + sign(2)\n"}
    owners = Owners(frozenset({"lib", "use"}), frozenset({"Key"}), frozenset())
    renamed = rename_identifier(ours, "sign", "seal", owners)
    assert renamed is not None and "sign" not in "".join(renamed.values())
    # `k.sign(...)`: k may be another library's object, whose `sign` we must not rename.
    foreign = {**ours, "other.py": "def g(k):\n    return k.sign(1)\n"}
    assert rename_identifier(foreign, "sign", "seal", owners) is None
    # ...unless the name is private by convention.
    private = {p: t.replace("sign", "_sign") for p, t in foreign.items()}
    assert rename_identifier(private, "_sign", "_seal", owners) is not None
    # A string naming it (getattr, __all__) refuses it; so does a keyword argument of a public name.
    assert rename_identifier({**ours, "x.py": "__all__ = ['sign']\n"}, "sign", "seal", owners) is None
    assert rename_identifier({**ours, "x.py": "import json\njson.dumps(1, sign=2)\n"}, "sign", "seal", owners) is None
    # The compiler has the last word: a new name that is a local somewhere changes the program.
    clash = {"lib.py": "def helper():\n    return 1\n\n\ndef g():\n    fresh = 2\n    return helper() + fresh\n"}
    assert rename_identifier(clash, "helper", "fresh", NOBODY) is None
    assert rename_identifier(clash, "helper", "assist", NOBODY) is not None


def test_new_names_are_fresh_on_both_sides_of_the_change():
    """Regression (pyjwt): a name chosen on the patched side was a local of a function that
    only the base side has; git then aligned the diff differently and the variant's defect
    grew, so the case got no variant."""
    new = "def f(jwk):\n    result = jwk + 1\n    return result\n"
    old = "def g():\n    outcome = 1\n    return outcome\n\n\n" + new.replace("+ 1", "- 1")
    edit = FileEdit("m.py", old, new)
    both = _renamed_both(edit, [2], "k")
    assert not isinstance(both, NoVariant)
    _old, _new, mapping = both
    assert not set(mapping.values()) & set(re.findall(r"\w+", old))


def test_a_local_of_two_touched_functions_gets_one_new_name():
    """Regression (pyjwt `sign`/`verify`): both functions have `msg`; the second chose
    another name than the first, the file's mapping kept the first's, so the base side was
    renamed differently from the patched side and the defect's diff grew."""
    new = ("def sign(msg, key):\n    signer = key + 1\n    return signer + msg\n\n\n"
           "def verify(msg, key, sig):\n    checker = key + 2\n    return checker + msg == sig\n")  # fmt: skip
    old = new.replace("key + 1", "key + 3").replace("key + 2", "key + 4")
    for seed in range(20):
        both = _renamed_both(FileEdit("m.py", old, new), [2, 7], f"k{seed}", params=lambda _f, _p: True)
        assert not isinstance(both, NoVariant), (seed, both)
        renamed_old, renamed_new, _mapping = both
        assert _changed(file_diff("m.py", renamed_old, renamed_new).decode()) == 4


def test_prose_counts_as_code_when_the_tests_run_its_doctests(git_repo):
    from reviewbench.git.repo import open_repository
    from reviewbench.git.stream import BlobReader
    from reviewbench.mine.head import HeadTree
    from reviewbench.mine.identifiers import RepositoryNames
    from reviewbench.mine.paths import PathClassifier

    sides = {"pkg/calc.py": (CALC, CALC.replace("< 10", "<= 10"))}
    results = []
    for settings in ("[tool.pytest.ini_options]\naddopts = '-q'\n",
                     "[tool.pytest.ini_options]\naddopts = '--doctest-glob=*.rst'\n"):  # fmt: skip
        repo = git_repo()
        repo.commit("init", {"pkg/calc.py": CALC, "README.rst": ">>> is_small(3)\nTrue\n", "pyproject.toml": settings})
        opened = open_repository(repo.path)
        with BlobReader(opened.path) as blobs:
            names = RepositoryNames(HeadTree(opened, PathClassifier(("tests/*",), (), ()), blobs))
            results.append(names.rename("is_small", sides, random.Random(0)))
    plain, doctested = results
    assert plain is not None and doctested is None
    new, edited, others = plain
    assert others == {} and new in edited["pkg/calc.py"][0] and "is_small" not in edited["pkg/calc.py"][1]


def test_a_class_attribute_a_defect_touches_is_renamed_when_private():
    source = "class Box:\n    _LIMIT = 10\n\n    def small(self, v):\n        return v < self._LIMIT\n"
    names, fallback, outside = touched_names(source, [2])
    assert names == ["_LIMIT", "Box"] and fallback == [] and outside
    # In a method: the method first, its classes only as a fallback.
    assert touched_names(source, [5]) == (["small"], ["Box"], False)
    renamed = rename_identifier({"m.py": source}, "_LIMIT", "_CAP", NOBODY)
    assert renamed is not None and "self._CAP" in renamed["m.py"] and "_CAP = 10" in renamed["m.py"]


def test_a_method_whose_name_cannot_change_gets_its_class_renamed(git_repo, tmp_path):
    cache = "class Cache:\n    def get(self):\n        return self.size > 3\n"  # `get`: maybe another library's
    use = "from pkg.cache import Cache\n\n\ndef full(c):\n    return c.get()\n"
    test = "from pkg.cache import Cache\n\n\ndef test_get():\n    c = Cache()\n    c.size = 4\n    assert c.get()\n"
    test += "    c.size = 3\n    assert not c.get()\n"
    repo = git_repo("cls")
    repo.commit("init", {"pkg/__init__.py": "", "pkg/cache.py": cache, "pkg/use.py": use, "tests/test_cache.py": test})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=1, paths=("pkg/cache.py",), rename=True,
                           controls_ratio=0), out, warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    (variant,) = [g for g in corpus.gold if g.variant_of]
    vcase = next(c for c in corpus.cases if c.case_id == variant.case_id)
    base_patch = (out / vcase.base_patch).read_text()
    new = re.search(r"^\+class (\w+):", base_patch, re.M).group(1)
    assert f"+from pkg.cache import {new}" in base_patch and "-    def get(self)" not in base_patch
    assert new[0].isupper()  # a class keeps the look of a class name
    (location,) = variant.defects[0].locations
    assert location.symbol == f"{new}.get"
    validate_corpus(out, validate_config())
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold}
    assert statuses[variant.case_id] == statuses[variant.variant_of] == "observed"


def test_the_base_side_renames_the_same_function_when_the_defect_deletes_its_neighbour():
    """Regression (pyjwt `from_jwk`): the defect deletes the method above the touched one;
    the gold line's nearest surviving neighbour on the base side lay in the deleted method,
    so the base side renamed that method's locals instead and the defect's diff grew."""
    touched = "    @staticmethod\n    def load(jwk):\n        obj = dict(jwk)\n        return obj\n"
    deleted = "    @staticmethod\n    def dump(key_obj):\n        obj = {'k': key_obj}\n        return obj\n\n"
    head = "class Algo:\n    def verify(self):\n        return False\n\n"
    old, new = head + deleted + touched, head + touched
    # Line 5, the touched method's decorator, lines up with the deleted method's decorator.
    both = _renamed_both(FileEdit("m.py", old, new), [5], "k", params=lambda _f, _p: True)
    assert not isinstance(both, NoVariant), both
    renamed_old, renamed_new, mapping = both
    assert "obj" in mapping and "def dump(key_obj):" in renamed_old  # the deleted method keeps its names
    assert _changed(file_diff("m.py", renamed_old, renamed_new).decode()) == 5


def test_a_gold_line_past_the_end_of_the_file_keeps_its_place(git_repo, tmp_path):
    """Regression (pyjwt): a fix reversal that deletes a file's last lines has a gold line
    just past the end; the line map by content had no place for it, so no variant."""
    buggy = "def total(values):\n    acc = 0\n    for v in values:\n        acc += v\n    return acc\n"
    fixed = buggy.replace("acc += v", "acc += v or 0") + "\n\ndef mean(values):\n    n = len(values)\n    return total(values) / n\n"
    repo = git_repo("eof")
    repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": buggy})
    repo.commit("Fix totals with missing values", {"pkg/m.py": fixed})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, rename=True, controls_ratio=0), out, warn=lambda _m: None)
    corpus = read_corpus(out)
    (original,) = [g for g in corpus.gold if not g.variant_of]
    assert max(loc.end_line for loc in original.defects[0].locations) == len(buggy.splitlines()) + 1
    (variant,) = [g for g in corpus.gold if g.variant_of]
    assert sorted((loc.start_line, loc.end_line) for loc in variant.defects[0].locations) == sorted(
        (loc.start_line, loc.end_line) for loc in original.defects[0].locations)  # fmt: skip


def test_stubs_are_renamed_with_their_module_and_a_stub_only_defect_is_counted_apart(git_repo, tmp_path):
    repo = git_repo("stubs")
    calc = "def is_small(value):\n    return value < 10\n"
    repo.commit("init", {"pkg/__init__.py": "__all__ = ['size']\n", "pkg/calc.py": calc,
                         "pkg/calc.pyi": "def is_small(value: int) -> bool: ...\n",
                         "pkg/types.pyi": "def size() -> int: ...\n",
                         "tests/test_calc.py": "from pkg.calc import is_small\n\n\ndef test_it():\n    assert is_small(value=3)\n"})  # fmt: skip
    repo.commit("Fix the size type", {"pkg/types.pyi": "def size() -> float: ...\n"})
    out = tmp_path / "corpus"
    summary = mine_corpus(MineConfig(repo=repo.path, mirrors=False, mutations=1, paths=("pkg/calc.py",), rename=True, controls_ratio=0),
                          out, warn=lambda _m: None)  # fmt: skip
    assert summary.synthetic.variants_skipped_by == {"stubs_only": 1}
    corpus = read_corpus(out)
    (variant,) = [g for g in corpus.gold if g.variant_of]
    base_patch = (out / next(c for c in corpus.cases if c.case_id == variant.case_id).base_patch).read_text()
    assert "b/pkg/calc.pyi" in base_patch and "-def is_small(value: int) -> bool: ..." in base_patch


def test_a_set_constant_does_not_make_the_rename_depend_on_the_hash_seed():
    """Regression (pyjwt `algorithms.py`, `x in {"RS256", ...}`): the compiler's frozenset
    constants iterate in an order that differs between two compilations under some hash
    seeds; compared element by element, the rename was refused in some runs only."""
    import os
    import subprocess
    import sys

    code = (
        "from reviewbench.mine.identifiers import Owners, rename_identifier\n"
        "src = 'def helper(x):\\n    return x\\n\\n\\ndef g(a):\\n    return helper(a) in {%s}\\n'\n"
        "src = src % ', '.join(repr(f'RS{n}') for n in range(40))\n"
        "none = Owners(frozenset(), frozenset(), frozenset())\n"
        "print(rename_identifier({'m.py': src}, 'helper', 'assist', none) is not None)\n"
    )
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "True", (seed, out.stderr)
