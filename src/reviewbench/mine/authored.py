"""Authored cases: hand-made cases added to a corpus, e.g. a repository-rule
violation and its look-alike safe counterexample on two branches.

A case is a base commit and a patch (given, or the diff from base to a head commit) plus a
gold TOML file. The patch must apply; locations are computed in the patched tree from
each location's ``symbol`` (Python: the definition's lines) or its line range. Every
change rewrites ``cases.jsonl``, ``gold.jsonl`` and ``corpus.json`` atomically with the new
``gold_sha256``: a registered run directory then refuses the changed gold unless scored
with ``--new-version``.

Gold TOML::

    expect_finding = true            # false for a safe counterexample
    stratum = "rule_violation"       # optional; --stratum wins
    pair_id = "money-rounding"       # optional; --pair-id wins
    exploratory = false              # optional; true (or --exploratory): scored apart from the headline
    [[defect]]
    class = "rule_violation"
    severity = "high"                # low | med | high, optional
    severity_basis = { asset = "invoices", trigger = "an order with a discount", consequence = "wrong totals billed", scope = "every discounted order", controls = "no test sums a discounted order" }
    trigger = "an order with a discount"
    description = "rounds each line instead of the total"
    rule_id = "R-01"                 # optional: the repository rule it violates
    acceptable_descriptions = ["rounding per line", "floating point money"]
    [[defect.location]]
    path = "shop/billing.py"
    symbol = "Invoice.total"         # or start_line / end_line

The file is strictly typed (a TOML file is written by hand, perhaps by someone else): a
string where a number belongs, ``1.9`` for a line, ``true`` for a line or ``"no"`` for
``expect_finding``, an unknown key, ``defect_id`` or ``locations`` (reviewbench sets the
ids and computes the locations), or a ``location`` that is not an array of tables is
refused with one line naming the key.
"""

from __future__ import annotations

import ast
import hashlib
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UsageError
from ..git.apply import patched_files
from ..git.blame import diff_bytes
from ..git.repo import Repository
from ..records import Case, Defect, GoldRecord, Location, Provenance, SeverityBasis
from ..store.corpus import (
    CASES_FILE,
    GOLD_FILE,
    META_FILE,
    Corpus,
    dump_jsonl,
    read_corpus,
    sha256_file,
)
from ..store.journal import write_atomic
from .naming import case_id, neutral_title
from .paths import language_of

__all__ = ["add_case", "patch_paths", "remove_case"]

_DIFF_GIT = re.compile(rb"^diff --git a/(.+?) b/(.+)$", re.MULTILINE)
_PLUS = re.compile(rb"^\+\+\+ (?:b/(.+)|/dev/null)$", re.MULTILINE)


def patch_paths(patch: bytes) -> list[str]:
    """The files a git-format patch changes, as named after it applies (deletions: before)."""
    paths: list[str] = []
    for section in re.split(rb"(?m)^(?=diff --git )", patch):
        head = _DIFF_GIT.search(section)
        if not head:
            continue
        plus = _PLUS.search(section)
        name = plus.group(1) if plus and plus.group(1) else head.group(2 if b"deleted file" not in section else 1)
        path = name.decode("utf-8", "surrogateescape")
        if path not in paths:
            paths.append(path)
    return paths


def _symbol_span(text: str, symbol: str, path: str) -> tuple[int, int]:
    """Lines of the Python definition ``symbol`` (dotted: ``Cls.method``) in ``text``."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise UsageError(f"{path} does not parse after the patch ({exc.msg}); give start_line/end_line") from None
    found: list[tuple[int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if name == symbol:
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    found.append((first, child.end_lineno or child.lineno))
                walk(child, f"{name}.")

    walk(tree, "")
    if not found:
        raise UsageError(f"no definition {symbol!r} in {path} after the patch")
    return found[0]


class _Toml(BaseModel):
    # Strict: TOML has real types, and a value of the wrong one is a mistake, never coerced.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _LocationToml(_Toml):
    """One ``[[defect.location]]``: a path and a symbol or a line range."""

    path: str
    symbol: str | None = None
    start_line: int | None = None
    end_line: int | None = None


class _DefectToml(_Toml):
    """One ``[[defect]]``: what a person may say of a defect (ids and spans are computed)."""

    defect_class: str | None = Field(default=None, alias="class")
    severity: Literal["low", "med", "high"] | None = None
    severity_basis: SeverityBasis | str | None = None
    trigger: str | None = None
    description: str | None = None
    safe_path: str | None = None
    rule_id: str | None = None
    acceptable_descriptions: list[str] | None = None
    symbols: list[str] | None = None
    removed_identifiers: list[str] | None = None
    added_identifiers: list[str] | None = None
    hint_terms: list[str] | None = None
    location: list[_LocationToml] = Field(default_factory=list)


class _GoldToml(_Toml):
    """A gold TOML file, as written by hand."""

    expect_finding: bool = True
    stratum: str | None = None
    pair_id: str | None = None
    exploratory: bool = False
    defect: list[_DefectToml] = Field(default_factory=list)


#: Keys reviewbench sets itself, with what to write instead.
_COMPUTED = {"defect_id": "reviewbench numbers the defects of a case itself",
             "locations": "write [[defect.location]] tables; their lines are computed"}  # fmt: skip
_TABLES = {"defect": "[[defect]] tables", "location": "[[defect.location]] tables"}


def _toml_error(exc: ValidationError, source: str) -> UsageError:
    """The first problem of a gold file as one line naming the key (numbered from 1)."""
    first = exc.errors()[0]
    loc = [p + 1 if isinstance(p, int) else p for p in first["loc"]]
    where = ".".join(f"{p}" if isinstance(p, str) else f"[{p}]" for p in loc).replace(".[", "[")
    key = next((p for p in reversed(loc) if isinstance(p, str)), "")
    if first["type"] == "extra_forbidden":
        hint = _COMPUTED.get(key, "not a key of this table")
        return UsageError(f"{source}: {where}: unknown gold key {key!r} ({hint})")
    detail = "Input should be a table" if first["type"] == "model_type" else first["msg"]
    if key in _TABLES and first["type"] in ("list_type", "model_type"):
        detail += f"; write {_TABLES[key]}"
    value = repr(first.get("input"))
    got = f" (got {value[:40]}{'…' if len(value) > 40 else ''})" if first["type"] != "missing" else ""
    return UsageError(f"{source}: {where}: {detail}{got}")


def _locations(raw: list[_LocationToml], files: dict[str, bytes | None], paths: list[str],
               source: str) -> list[Location]:  # fmt: skip
    out = []
    for entry in raw:
        path = entry.path
        if path not in paths:
            raise UsageError(f"{source}: gold location path {path!r} is not a file the patch changes ({', '.join(paths)})")
        data = files.get(path)
        if data is None:
            raise UsageError(f"{source}: {path} does not exist after the patch; a location must lie in the patched tree")
        text = data.decode("utf-8", "replace")
        symbol = entry.symbol
        if entry.start_line is None and entry.end_line is not None:
            raise UsageError(f"{source}: gold location in {path}: end_line needs a start_line")
        if entry.start_line is not None:
            start = entry.start_line
            end = entry.end_line if entry.end_line is not None else start
            if not 1 <= start <= end <= len(text.splitlines()):
                raise UsageError(f"{source}: lines {start}-{end} are outside {path} after the patch")
        elif symbol:
            if language_of(path) != "python":
                raise UsageError(f"{source}: a symbol locates only Python code; give start_line/end_line for {path}")
            start, end = _symbol_span(text, symbol, path)
        else:
            raise UsageError(f"{source}: gold location in {path} needs a symbol or start_line/end_line")
        out.append(Location(path=path, start_line=start, end_line=end, symbol=symbol))
    return out


def _read_spec(data: dict, source: str) -> _GoldToml:
    """A gold TOML file's content, strictly typed.

    Raises:
        UsageError: one line naming the key and what is wrong with it.
    """
    try:
        return _GoldToml.model_validate(data)
    except ValidationError as exc:
        raise _toml_error(exc, source) from None


def _gold(raw: dict, cid: str, stratum: str | None, pair_id: str | None, base: str,
          files: dict[str, bytes | None], paths: list[str], source: str, exploratory: bool = False) -> GoldRecord:  # fmt: skip
    spec = _read_spec(raw, source)
    expect = spec.expect_finding
    if expect and not spec.defect:
        raise UsageError(f"{source}: a case that expects a finding needs at least one [[defect]]")
    if not expect and spec.defect:
        raise UsageError(f"{source}: expect_finding = false (a clean case) cannot list defects")
    defects = []
    try:
        for number, d in enumerate(spec.defect, start=1):
            fields = d.model_dump(by_alias=True, exclude_none=True, exclude={"location"})
            fields.setdefault("class", stratum or spec.stratum or "authored")
            defects.append(Defect(defect_id=f"{cid}-d{number}", locations=_locations(d.location, files, paths, source),
                                  **fields))  # fmt: skip
        return GoldRecord(case_id=cid, stratum=stratum or spec.stratum or "authored", expect_finding=expect,
                          pair_id=pair_id or spec.pair_id, defects=defects, exploratory=exploratory or spec.exploratory,
                          provenance=Provenance(parent=base, operator="authored"))  # fmt: skip
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{source}: {where}: {first['msg']}") from None


def _rewrite(corpus: Corpus, cases: list[Case], gold: list[GoldRecord]) -> str:
    """Write the records back atomically, gold re-hashed; return the new gold SHA-256."""
    cases = sorted(cases, key=lambda c: c.case_id)
    gold = sorted(gold, key=lambda g: g.case_id)
    write_atomic(corpus.path / CASES_FILE, dump_jsonl(cases))
    write_atomic(corpus.path / GOLD_FILE, dump_jsonl(gold))
    sha = sha256_file(corpus.path / GOLD_FILE)
    by_stratum = dict(corpus.meta.counts.by_stratum)
    by_stratum.update({k: 0 for k in by_stratum})
    by_stratum.update(Counter(g.stratum for g in gold))
    counts = corpus.meta.counts.model_copy(update={"cases": len(cases), "by_stratum": by_stratum})
    meta = corpus.meta.model_copy(update={"counts": counts, "gold_sha256": sha})
    write_atomic(corpus.path / META_FILE, meta.model_dump_json(indent=2).encode() + b"\n")
    return sha


def add_case(corpus_path: Path, repo: Repository, base: str, *, head: str | None = None, patch: bytes | None = None,
             gold_file: Path, stratum: str | None = None, pair_id: str | None = None,
             exploratory: bool = False) -> tuple[Case, GoldRecord]:  # fmt: skip
    """Add one authored case to a corpus (``exploratory``: scored apart from the headline).

    Raises:
        UsageError: a bad gold file, a location that cannot be placed, or a duplicate case.
        GitError: a revision is unknown or the patch does not apply.
    """
    corpus = read_corpus(corpus_path)
    base_sha = repo.run("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", check=False)
    if not base_sha:
        raise UsageError(f"--base {base} is not a commit of {repo.path}")
    if head is not None:
        head_sha = repo.run("rev-parse", "--verify", "--quiet", f"{head}^{{commit}}", check=False)
        if not head_sha:
            raise UsageError(f"--head {head} is not a commit of {repo.path}")
        changed = repo.run("diff", "--name-only", "-z", base_sha, head_sha).split("\0")
        patch = diff_bytes(repo, base_sha, head_sha, [p for p in changed if p], renames=True)
    if not patch:
        raise UsageError("the patch is empty: nothing to review")
    paths = patch_paths(patch)
    if not paths:
        raise UsageError("the patch names no file (is it a git-format unified diff?)")
    files = patched_files(repo, base_sha, patch, paths)
    try:
        raw = tomllib.loads(gold_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read gold file {gold_file}: {exc}") from None
    seed = int(corpus.meta.config.get("seed", 0) or 0)
    key = f"authored:{base_sha}:{hashlib.sha256(patch).hexdigest()}"
    cid = case_id(seed, key)
    if any(c.case_id == cid for c in corpus.cases):
        raise UsageError(f"the corpus already holds this case ({cid}): same base and patch")
    gold = _gold(raw, cid, stratum, pair_id, base_sha, files, paths, str(gold_file), exploratory)
    languages = Counter(lang for p in paths if (lang := language_of(p)))
    case = Case(case_id=cid, base=base_sha, title=neutral_title(seed, key, paths), patch=f"patches/{cid}.diff",
                paths=paths, language=languages.most_common(1)[0][0] if languages else None)  # fmt: skip
    write_atomic(corpus_path / case.patch, patch)
    _rewrite(corpus, [*corpus.cases, case], [*corpus.gold, gold])
    return case, gold


def remove_case(corpus_path: Path, cid: str) -> None:
    """Remove a case, its gold and its patch files from a corpus.

    Raises:
        UsageError: no such case.
    """
    corpus = read_corpus(corpus_path)
    case = next((c for c in corpus.cases if c.case_id == cid), None)
    if case is None:
        raise UsageError(f"{corpus_path} holds no case {cid!r}")
    dependants = [g.case_id for g in corpus.gold if g.variant_of == cid]
    if dependants:
        raise UsageError(f"{cid} has rename variant(s) {', '.join(dependants)}: remove them first")
    _rewrite(corpus, [c for c in corpus.cases if c.case_id != cid], [g for g in corpus.gold if g.case_id != cid])
    root = corpus_path.resolve()
    gold = next((g for g in corpus.gold if g.case_id == cid), None)
    for name in (case.patch, case.base_patch, gold.provenance.test_patch if gold else None):
        if name:
            target = (root / name).resolve()
            if root in target.parents and target.is_file() and not target.is_symlink():
                target.unlink()

