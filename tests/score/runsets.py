"""Small real corpora and run directories for the tests of ``compare`` and ``gate``.

A corpus of ``defects`` defect cases (each with its mirror, so that a naming finding
identifies) and ``controls`` clean cases; a run directory whose every run is written for
real in ``runs.sqlite``, each condition saying exactly what the test asks: which defect
cases it names the defect on, which controls it flags.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from reviewbench.records import (
    Case,
    CorpusCounts,
    CorpusMeta,
    Defect,
    Finding,
    GoldRecord,
    Location,
    Provenance,
    RepoInfo,
    Validation,
)
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore

from .mirrors import mirror_id, paired


def defect_id(i: int) -> str:
    return f"d{i}"


def control_id(j: int) -> str:
    return f"k{j}"


def write_corpus(path: Path, defects: int, controls: int, mutations: Collection[int] = (),
                 extra: str = "") -> Path:  # fmt: skip
    """Defect case ``d{i}`` changes ``app/m{i}.py`` with its defect at lines 10-12 in
    function ``fetch{i}`` (stratum ``mutation`` for i in ``mutations``, else ``fix_reversal``);
    control ``k{j}`` changes ``app/c{j}.py``. ``extra`` goes into every patch (two corpora
    with different ``extra`` share no case)."""
    writer = CorpusWriter(path)
    with writer:
        for i in range(defects):
            cid = defect_id(i)
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                        paths=[f"app/m{i}.py"], language="python")  # fmt: skip
            defect = Defect(defect_id=f"{cid}-1", defect_class="boundary", severity="high",
                            locations=[Location(path=f"app/m{i}.py", start_line=10, end_line=12)],
                            symbols=[f"fetch{i}"])  # fmt: skip
            gold = GoldRecord(case_id=cid, stratum="mutation" if i in mutations else "fix_reversal",
                              expect_finding=True, defects=[defect], provenance=Provenance(),
                              validation=Validation(status="observed"))  # fmt: skip
            for record in paired(case, gold):
                writer.add(*record, f"--- {record[0].case_id}{extra}\n".encode())
        for j in range(controls):
            cid = control_id(j)
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                        paths=[f"app/c{j}.py"], language="python")  # fmt: skip
            gold = GoldRecord(case_id=cid, stratum="control", expect_finding=False, defects=[],
                              provenance=Provenance(), validation=Validation(status="not_observed"))  # fmt: skip
            writer.add(case, gold, f"--- {cid}{extra}\n".encode())
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=2 * defects + controls, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return path


@dataclass
class Reviewer:
    """What one condition says: the defect case indices it names the defect on and the
    controls it flags, per repetition (a set of ints: every repetition alike; a dict
    rep -> set: per repetition)."""

    finds: set[int] | dict[int, set[int]] = field(default_factory=set)
    flags: set[int] | dict[int, set[int]] = field(default_factory=set)
    model: str = "model-1"
    prompt: str = "p"
    kind: str = "command"
    failed: set[int] = field(default_factory=set)
    """Defect case indices whose run failed (no review), every repetition."""
    usage: bool = True
    """The runs report token usage (10 in, 5 out), except failed ones."""
    switch: tuple[int, str] | None = None
    """(i, model): defect cases (and their mirrors) and controls of index i and above are
    answered by another model (a mid-run routing change)."""

    def model_for(self, index: int) -> str:
        return self.switch[1] if self.switch and index >= self.switch[0] else self.model

    def at(self, which: set[int] | dict[int, set[int]], rep: int) -> set[int]:
        return which.get(rep, set()) if isinstance(which, dict) else which


def _row(condition: str, case_id: str, rep: int, reviewer: Reviewer, gold_sha: str, findings: list[Finding],
         failed: bool = False, day: str = "2026-03-01", index: int = 0) -> RunRow:  # fmt: skip
    state = "failed" if failed else ("completed_findings" if findings else "completed_no_findings")
    return RunRow(
        run_id=f"{condition}-{case_id}-{rep}", case_id=case_id, condition=condition, repetition=rep,
        variant="original", state=state, started_at=f"{day}T00:00:00.000+00:00",
        ended_at=f"{day}T00:00:01.000+00:00", latency_s=1.0, attempts=1, cached=False,
        model_requested=reviewer.model, model_returned=None if failed else reviewer.model_for(index), params={},
        prompt_sha256=hashlib.sha256(reviewer.prompt.encode()).hexdigest(), guidance_sha256=None,
        gold_sha256=gold_sha, tool_version="test", tokens_in=10 if reviewer.usage and not failed else None,
        tokens_out=5 if reviewer.usage and not failed else None,
        raw_output=None if failed else "\n".join(f.raw for f in findings) or "NO_ISSUES", unparsed=[],
        error="boom" if failed else None, cache_key=f"k-{condition}-{case_id}-{rep}", findings=findings,
    )  # fmt: skip


def write_runs(path: Path, corpus: Path, conditions: dict[str, Reviewer], defects: int, controls: int,
               repeats: int = 1, day: str = "2026-03-01") -> Path:  # fmt: skip
    """A run directory: every condition on every case (mirrors silent) for ``repeats``."""
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    path.mkdir(parents=True)
    store = RunStore(path / "runs.sqlite", create=True)
    experiment = {"condition": [{"name": n, "reviewer": {"kind": r.kind, "model": r.model}}
                                for n, r in conditions.items()]}  # fmt: skip
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha, "experiment": json.dumps(experiment)})
    for name, reviewer in conditions.items():
        for rep in range(repeats):
            for i in range(defects):
                said = []
                if i in reviewer.at(reviewer.finds, rep):
                    said = [Finding(path=f"app/m{i}.py", line=11, severity="high", claim=f"fetch{i} is off by one",
                                    raw=f"app/m{i}.py:11 high fetch{i} is off by one")]  # fmt: skip
                store.record(_row(name, defect_id(i), rep, reviewer, gold_sha, said, i in reviewer.failed, day, i), None)
                store.record(_row(name, mirror_id(defect_id(i)), rep, reviewer, gold_sha, [], day=day, index=i), None)
            for j in range(controls):
                said = []
                if j in reviewer.at(reviewer.flags, rep):
                    said = [Finding(path=f"app/c{j}.py", line=3, severity="low", claim="looks odd",
                                    raw=f"app/c{j}.py:3 low looks odd")]  # fmt: skip
                store.record(_row(name, control_id(j), rep, reviewer, gold_sha, said, day=day, index=j), None)
    store.close()
    return path
