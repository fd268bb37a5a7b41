"""Mirrors: the same change as a defect case, the other way, as a clean case paired with it.

A remark that holds for the buggy version and for the clean version of the same code (a
style nit at the first changed line, a quoted identifier) says nothing about the defect.
So every fix reversal and every mutation C (base B, patch P) gets a mirror M:

- ``M.base = B`` with ``M.base_patch = P``: M's base tree, as validation and the exported
  trees see it, is exactly C's patched tree (the base patch is never shown as a change);
- ``M.patch`` = P the other way, made by the same machinery as P (``git diff-tree`` from
  the fix's parent to the fix for a fix reversal, :func:`~.textdiff.file_diff` for a
  mutation), so that its diff reads like every other case's: M's patched tree is B again,
  the fix itself or the un-mutation;
- gold: ``stratum = "mirror"``, ``expect_finding = false``, no defect, ``changed`` = the
  line ranges M's patch writes, labelled as C's gold locations are, C's provenance and
  date, and a ``pair_id`` shared with C (set on both; gold only).

A rename variant is not mirrored: its original is. Ids and titles are neutral like every
case's: their key also holds C's gold description, which no reviewer sees.
"""

from __future__ import annotations

import hashlib

from ..git.repo import Repository
from ..git.stream import BlobReader, iter_diffs
from ..records import Case, GoldRecord, Location, Stratum
from .diff import FileChange
from .edits import FileEdit, SyntheticCase, edited_location
from .fix_reversal import MinedCase, changed_locations
from .naming import case_id, neutral_title

__all__ = ["MIRRORED", "fix_mirrors", "mutation_mirror", "pair_id"]

#: Strata that get a mirror (their rename variants do not).
MIRRORED = frozenset({Stratum.FIX_REVERSAL.value, Stratum.MUTATION.value})


def _key(original: GoldRecord) -> str:
    description = original.defects[0].description if original.defects else ""
    digest = hashlib.sha256(description.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"mirror:{original.case_id}:{digest}"


def pair_id(seed: int, original: GoldRecord) -> str:
    """The neutral pair id of a defect case and its mirror (gold only)."""
    return "pair-" + case_id(seed, "pair:" + _key(original)).removeprefix("case-")


def _mirror(seed: int, original: MinedCase, patch: bytes, paths: list[str], changed: list[Location]) -> MinedCase:
    key = _key(original.gold)
    cid = case_id(seed, key)
    base_patch = f"patches/{cid}.base.diff"
    case = Case(
        case_id=cid,
        base=original.case.base,
        title=neutral_title(seed, key, paths),
        patch=f"patches/{cid}.diff",
        base_patch=base_patch,
        paths=paths,
        language=original.case.language,
    )
    gold = GoldRecord(
        case_id=cid,
        stratum=Stratum.MIRROR,
        expect_finding=False,
        pair_id=pair_id(seed, original.gold),
        changed=changed,
        source_date=original.gold.source_date,
        defects=[],
        provenance=original.gold.provenance.model_copy(),
    )
    return MinedCase(case, gold, patch, {base_patch: original.patch})


def mutation_mirror(seed: int, mutation: SyntheticCase) -> MinedCase:
    """The un-mutation of ``mutation``: its edits the other way (``mutation.mined`` must
    still hold its patch bytes, the mirror's base patch)."""
    back = [FileEdit(e.path, e.new, e.old, e.mode, e.python_funcnames) for e in mutation.edits]
    patch = b"".join(e.diff() for e in back)
    changed = [edited_location(e.path, e.old, e.new) for e in back]
    return _mirror(seed, mutation.mined, patch, [e.path for e in back], changed)


def fix_mirrors(seed: int, repo: Repository, fixes: list[MinedCase], max_lines: int) -> tuple[list[MinedCase], int]:
    """The mirror of each fix reversal: the fix's own diff (parent → fix) of the files the
    reversal changes, which turns the reversal's tree back into the fix commit's.

    ``fixes`` must hold their patch bytes (each mirror's base patch). A fix whose forward
    diff does not pair file for file with its reversal (git's rename detection paired
    other files) gets no mirror.

    Returns:
        The mirrors, and how many fixes got none.
    """
    wanted = [(fix, (fix.gold.provenance.parent, fix.gold.provenance.commit))
              for fix in fixes if fix.gold.provenance.parent and fix.gold.provenance.commit]  # fmt: skip
    found: list[tuple[MinedCase, list[FileChange]]] = []
    # Twice the cap: git may align the diff the other way a little differently.
    for fix, sections in iter_diffs(repo.path, wanted, keep_lines=2 * max_lines):
        paths = set(fix.case.paths)
        changes = [c for s in sections or () if ((c := FileChange(s)).old_path or c.new_path) in paths]
        named = sorted(c.old_path or c.new_path or "" for c in changes)
        if named == sorted(paths) and all(c.section.body is not None for c in changes):
            found.append((fix, changes))
    with BlobReader(repo.path) as blobs:
        contents = blobs.get_many(list(dict.fromkeys(c.new_blob for _, cs in found for c in cs if c.new_blob)))
    mirrors = [_mirror(seed, fix, b"".join(c.section.raw() for c in changes), [c.path for c in changes],
                       changed_locations(changes, contents))
               for fix, changes in found]  # fmt: skip
    return mirrors, len(fixes) - len(mirrors)
