"""Cost per run and per identified defect from a price table, by hand."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reviewbench.config.prices import Price, PriceTable
from reviewbench.errors import UsageError
from reviewbench.score import ScoreOptions, score_run
from reviewbench.score.cost import load_prices

from .runsets import Reviewer, write_corpus, write_runs

# 10 input tokens at 1 per million and 5 output tokens at 2 per million: 2e-5 a run.
TABLE = PriceTable(currency="USD", prices={"m-1": Price(input_per_mtok=1.0, output_per_mtok=2.0)})


def _cost(tmp_path, reviewer: Reviewer, table: PriceTable = TABLE) -> dict:
    corpus = write_corpus(tmp_path / "corpus", 4, 3)
    rundir = write_runs(tmp_path / "runs", corpus, {"bot": reviewer}, 4, 3)
    return score_run(rundir, ScoreOptions(prices=table)).as_json()["conditions"]["bot"]["cost"]


def test_cost_per_run_and_per_identified_defect(tmp_path):
    # 11 runs (4 defect cases, their 4 mirrors, 3 controls) at 2e-5: 2.2e-4; 2 defects identified.
    cost = _cost(tmp_path, Reviewer(finds={0, 1}, model="m-1"))
    assert cost["total"] == pytest.approx(2.2e-4)
    assert cost["per_run"] == {"value": pytest.approx(2e-5), "num": pytest.approx(2.2e-4), "den": 11,
                               "lo": pytest.approx(2e-5), "hi": pytest.approx(2e-5)}  # fmt: skip
    per_defect = cost["per_identified_defect"]
    assert (per_defect["value"], per_defect["den"]) == (pytest.approx(1.1e-4), 2)
    assert per_defect["lo"] <= 1.1e-4 <= per_defect["hi"]
    assert (cost["currency"], cost["complete"], cost["unpriced_models"]) == ("USD", True, [])


def test_no_price_no_cost(tmp_path):
    cost = _cost(tmp_path, Reviewer(finds={0}, model="m-other"))
    assert (cost["total"], cost["per_run"], cost["unpriced_models"]) == (None, None, ["m-other"])


def test_nothing_identified_leaves_cost_per_defect_undefined(tmp_path):
    cost = _cost(tmp_path, Reviewer(model="m-1"))
    assert cost["per_identified_defect"]["value"] is None and cost["per_identified_defect"]["den"] == 0
    assert cost["per_run"]["value"] == pytest.approx(2e-5)


def test_runs_without_usage_are_left_out_and_said(tmp_path):
    # d0's run failed and reported nothing: 10 priced runs, a lower bound.
    cost = _cost(tmp_path, Reviewer(finds={1}, model="m-1", failed={0}))
    assert (cost["complete"], cost["runs_without_usage"], cost["per_run"]["den"]) == (False, 1, 10)
    assert cost["total"] == pytest.approx(2e-4)


def test_score_prints_cost_apart_from_usage(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 4, 3)
    rundir = write_runs(tmp_path / "runs", corpus, {"bot": Reviewer(finds={0, 1}, model="m-1")}, 4, 3)
    prices = tmp_path / "prices.toml"
    prices.write_text('currency = "USD"\n[prices]\n"m-1" = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n')
    out = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir), "--prices", str(prices), "--details"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert ("cost (list-price estimate, not an invoice): 0.00022 USD total; 2e-05 USD [2e-05, 2e-05] per run (0.00022 USD / 11); "
            "0.00011 USD [") in out
    assert "per identified defect (0.00022 USD / 2)" in out


@pytest.mark.parametrize(("text", "expected"), [
    ("[prices", "invalid TOML"),
    ('[prices]\n"m" = { input_per_mtok = -1, output_per_mtok = 1 }', "prices.m.input_per_mtok"),
    ('[prices]\n"m" = { input = 1, output_per_mtok = 1 }', "prices.m.input"),
    ("currency = 'USD'", "prices: Field required"),
])  # fmt: skip
def test_malformed_price_tables(tmp_path, text, expected):
    path = tmp_path / "prices.toml"
    path.write_text(text + "\n")
    with pytest.raises(UsageError) as caught:
        load_prices(path)
    assert expected in str(caught.value)


def test_every_cost_is_labelled_a_list_price_estimate(tmp_path):
    cost = _cost(tmp_path, Reviewer(finds={0}, model="m-1"))
    assert cost["basis"] == "list-price estimate" and "refused" not in cost


def test_a_plan_funded_condition_gets_no_cost(tmp_path):
    """A plan or seat pays for it: tokens at list prices would be a cost no one pays."""
    table = TABLE.model_copy(update={"plan_funded": ["bot"]})
    cost = _cost(tmp_path, Reviewer(finds={0, 1}, model="m-1"), table)
    assert (cost["total"], cost["per_run"], cost["per_identified_defect"]) == (None, None, None)
    assert cost["refused"].startswith("plan-funded")


def test_a_forge_bot_gets_no_cost_and_score_says_why(tmp_path):
    from reviewbench.score.cost import refusal
    from reviewbench.store.runs import RunRow

    def run(kind):
        return RunRow(run_id="r", case_id="c", condition="bot", repetition=0, variant="original",
                      state="completed_no_findings", attempts=1, cached=False, params={"kind": kind},
                      prompt_sha256="p", gold_sha256="g", tool_version="t", cache_key="k")  # fmt: skip

    assert refusal("bot", [run("github")], TABLE) == "a forge bot: its plan pays for it and it reports no tokens"
    assert refusal("bot", [run("gitea")], TABLE) is not None
    assert refusal("bot", [run("openai")], TABLE) is None
    corpus = write_corpus(tmp_path / "corpus", 4, 3)
    rundir = write_runs(tmp_path / "runs", corpus, {"bot": Reviewer(finds={0}, model="m-1")}, 4, 3)
    prices = tmp_path / "prices.toml"
    prices.write_text('plan_funded = ["bot"]\n[prices]\n"m-1" = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n')
    out = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir), "--prices", str(prices), "--details"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "cost: not estimated: plan-funded (the price table's plan_funded)" in " ".join(out.split())
