"""One registry of metric names: scoring emits exactly it, gates accept only it, docs list it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewbench.errors import UsageError
from reviewbench.report.html import METRIC_HELP
from reviewbench.score.registry import METRICS, RATE_METRICS, check_metric_name

DOC = Path(__file__).parents[2] / "docs" / "SCORING.md"


def test_the_scoring_doc_lists_every_registered_metric():
    text = DOC.read_text(encoding="utf-8")
    missing = [m.name for m in METRICS if f"`{m.name}`" not in text]
    assert not missing


def test_the_report_explains_every_registered_metric():
    assert set(METRIC_HELP) == {m.name for m in METRICS}


@pytest.mark.parametrize("name", ["defect_recall", "located_recall@fix_reversal", "completion"])
def test_registered_names_are_accepted(name):
    check_metric_name(name, "gates")


@pytest.mark.parametrize("name, says", [("recall", "unknown metric"), ("latency_s", "unknown metric"),
                                        ("defect_recall@No-Where", "unknown stratum")])  # fmt: skip
def test_other_names_are_refused_with_the_list(name, says):
    with pytest.raises(UsageError, match=says) as caught:
        check_metric_name(name, "gates")
    if says == "unknown metric":
        assert ", ".join(RATE_METRICS) in str(caught.value)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_gates_with_non_finite_values_are_refused(tmp_path, value):
    from reviewbench.score.gates import load_gates

    gates = tmp_path / "g.toml"
    gates.write_text(f'[[tier]]\nname = "t"\nwhen = [{{ metric = "completion", op = ">", value = {value} }}]\n'
                     '[fallback]\nname = "none"\n')  # fmt: skip
    with pytest.raises(UsageError, match="finite"):
        load_gates(gates)


def test_a_user_defined_stratum_passes_unless_the_corpus_lacks_it():
    check_metric_name("defect_recall@payments", "gates")  # no corpus at hand: any well-formed name
    check_metric_name("defect_recall@payments", "gates", strata={"payments", "control"})
    check_metric_name("defect_recall@mutation", "gates", strata={"payments"})  # built-ins always
    with pytest.raises(UsageError, match="unknown stratum in 'defect_recall@nowhere'; strata: .*payments"):
        check_metric_name("defect_recall@nowhere", "gates", strata={"payments"})
