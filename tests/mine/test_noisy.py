"""Noisy diffs: a defect among unrelated refactors, gold on the defect alone (issue 15)."""

from __future__ import annotations

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.validate import validate_corpus

from .conftest import apply_in_clone, validate_config


def _changed_files(patch: str) -> list[str]:
    return [line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff --git ")]


def test_noisy_cases_keep_gold_only_on_the_defect_lines(project, tmp_path):
    out = tmp_path / "corpus"
    summary = mine_corpus(MineConfig(repo=project.path, fixes=False, mutations=2, noisy=2, controls_ratio=0), out,
                          warn=lambda _m: None)  # fmt: skip
    corpus = read_corpus(out)
    cases = {c.case_id: c for c in corpus.cases}
    noisy = [g for g in corpus.gold if g.stratum == "noisy"]
    defects = [g for g in noisy if g.expect_finding]
    clean = [g for g in noisy if not g.expect_finding]
    assert len(defects) == 2 and len(clean) == 2 and summary.synthetic.noisy == 4
    assert summary.meta.counts.by_stratum["noisy"] == 4 and summary.meta.counts.by_stratum["mutation"] == 2
    for gold in defects:
        case = cases[gold.case_id]
        files = _changed_files((out / case.patch).read_text())
        assert len(files) >= 2 and files == case.paths  # the defect's file and refactored other ones
        gold_paths = {loc.path for d in gold.defects for loc in d.locations}
        assert len(gold_paths) == 1 and gold_paths < set(files)  # gold on the defect's file only
        (location,) = gold.defects[0].locations
        tree = apply_in_clone(project.path, case.base, out / case.patch, tmp_path / gold.case_id)
        # The gold line in the combined tree is the mutated line of the operator.
        assert (tree / location.path).read_text().splitlines()[location.start_line - 1].strip()
    for gold in clean:
        assert gold.defects == [] and len(_changed_files((out / cases[gold.case_id].patch).read_text())) >= 2
    # Noisy defects are not also shown alone.
    mutated = {cases[g.case_id].paths[0] for g in corpus.gold if g.stratum == "mutation"}
    assert len(mutated) >= 1
    validate_corpus(out, validate_config())
    statuses = {g.case_id: g.validation.status.value for g in read_corpus(out).gold if g.stratum == "noisy"}
    assert all(statuses[g.case_id] == "not_observed" for g in clean)  # refactors keep the suite green
    assert sum(statuses[g.case_id] == "observed" for g in defects) >= 1
