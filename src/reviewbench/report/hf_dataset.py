"""The corpus's public side as a Hugging Face ``datasets`` directory (``export --format hf``).

What a reviewer may see and nothing more: one row per case of ``cases.jsonl`` with its
diff inline, in ``data/test.jsonl``, and a dataset card (``README.md``, YAML header naming
the data file) that says what is withheld. No gold: no stratum, no expected finding, no
defect, no pair or variant link; the card publishes the gold's SHA-256 so that answers
released later can be checked against it. ``datasets.load_dataset(DIR)`` reads it.

Derived cases are left out: a mirror is applied on top of its defect case's diff and a
rename variant on top of a rename (``base_patch``). A reviewer sees one case at a time; a
published table shows them side by side, where a mirror's base patch equal to another
row's diff would mark that row as carrying a defect.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..git.remote import project_name
from ..store.corpus import Corpus

__all__ = ["DATA_FILE", "PUBLIC_FIELDS", "public_cases", "write_hf_dataset"]

DATA_FILE = "data/test.jsonl"
#: The columns, every one from cases.jsonl (what a reviewer may see).
PUBLIC_FIELDS = ("case_id", "title", "base", "paths", "language", "patch")


def _text(corpus: Corpus, relative: str) -> str:
    path = corpus.path / relative
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def public_cases(corpus: Corpus) -> list:
    """The cases to publish: every case but mirrors and rename variants (see above)."""
    gold = {g.case_id: g for g in corpus.gold}
    out = []
    for case in corpus.cases:
        g = gold.get(case.case_id)
        if case.base_patch is not None or (g is not None and (g.variant_of or g.stratum == "mirror")):
            continue
        out.append(case)
    return out


def _card(corpus: Corpus, rows: int) -> str:
    meta = corpus.meta
    name = project_name(meta.repo.path, meta.repo.remote)  # a published card names no local folder
    return f"""---
configs:
- config_name: default
  data_files:
  - split: test
    path: {DATA_FILE}
task_categories:
- text-generation
tags:
- code-review
- reviewbench
pretty_name: {json.dumps(f'reviewbench corpus of {name}')}
---

# Code-review cases of {name}

{rows} of the corpus's {len(corpus.cases)} proposed changes (unified diffs against a base commit of the repository, HEAD
`{meta.repo.head}` when mined on {meta.created_at}), written by reviewbench {meta.tool_version}.
Each row is what a reviewer is shown: a neutral title, the diff, the changed paths. Some
changes reintroduce a real bug the repository's history fixed, or inject a small mutation;
others are clean (behaviour-preserving) changes. Which is which is **not** in this dataset.

## Fields

| field | meaning |
|---|---|
| `case_id` | neutral identifier (reveals neither the kind of change nor its source) |
| `title` | neutral title |
| `base` | the commit the diff applies to |
| `paths` | files the diff changes |
| `language` | main language of the changed files |
| `patch` | the unified diff |

The corpus's derived cases (each built on top of another case's diff: the same change the
other way, or after renaming locals) are not published: side by side with the rest they
would show which changes carry a defect.

## Withheld

The labels (`gold.jsonl`: the kind of each change, whether a finding is expected, the
defects' locations and descriptions, the fix commits) stay private so that the benchmark
measures reviewers rather than memory. Their SHA-256, fixed before any reviewer ran:

    gold_sha256 = {meta.gold_sha256}

Score a reviewer's output on these cases with `reviewbench` against the private labels.
"""


def write_hf_dataset(corpus: Corpus, out: Path) -> Path:
    """Write ``out/data/test.jsonl`` and ``out/README.md``; return ``out``."""
    (out / "data").mkdir(parents=True, exist_ok=True)
    cases = public_cases(corpus)
    with (out / DATA_FILE).open("w", encoding="utf-8") as handle:
        for case in cases:
            row = {"case_id": case.case_id, "title": case.title, "base": case.base, "paths": list(case.paths),
                   "language": case.language, "patch": _text(corpus, case.patch)}  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "README.md").write_text(_card(corpus, len(cases)), encoding="utf-8")
    return out
