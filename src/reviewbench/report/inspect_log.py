"""An inspect_ai evaluation log per condition (``export --format inspect``).

inspect_ai's JSON log format (``EvalLog``, version 2): one log per condition, the reviewer
as its model; one *sample* per run (id = run id, epoch = repetition + 1), its input the
packet's title and diff, its output the review as received, and one score per sample from
the run's verdicts (``reviewbench``: identified and located defects, false positives,
findings); the log's results carry the condition's scored metrics (completed analysis)
with numerator, denominator and interval in each metric's metadata. Written from
reviewbench's own records: inspect_ai is needed only to read it back (``inspect view``).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

from .._version import __version__
from ..records import RunRow
from ..score.registry import RATE_METRICS
from ..score.result import ScoreResult
from ..store.corpus import Corpus

__all__ = ["inspect_logs", "log_name", "write_inspect_logs"]

#: The metric inspect's viewer shows first (EvalResults.headline).
HEADLINE = "defect_recall"


def _iso(stamp: str | None, fallback: str) -> str:
    return stamp or fallback


def _sample(run: RunRow, index: dict, verdicts: list, patches: dict[str, str]) -> dict:
    gold, case = index["gold"].get(run.case_id), index["cases"].get(run.case_id)
    defects = len(gold.defects) if gold else 0
    identified = len({v.defect_id for v in verdicts if v.identified and v.defect_id})
    located = len({v.defect_id for v in verdicts if v.located and v.defect_id})
    false_positives = sum(1 for v in verdicts if v.false_positive)
    text = run.raw_output or ""
    prompt = f"{case.title if case else run.case_id}\n\n{patches.get(run.case_id, '')}"
    if gold and gold.defects:
        target = "; ".join(f"{d.defect_id}: " + ", ".join(f"{loc.path}:{loc.start_line}-{loc.end_line}"
                                                          for loc in d.locations) for d in gold.defects)  # fmt: skip
    else:
        target = "no defect: every finding is a false positive"
    usage = None
    if run.tokens_in is not None or run.tokens_out is not None:
        usage = {"input_tokens": run.tokens_in or 0, "output_tokens": run.tokens_out or 0,
                 "total_tokens": (run.tokens_in or 0) + (run.tokens_out or 0)}  # fmt: skip
    model = run.model_returned or run.model_requested or run.condition
    explanation = (f"{run.state.value}: identified {identified}/{defects}, located {located}/{defects}, "
                   f"{false_positives} false positive(s) of {len(run.findings)} finding(s)")  # fmt: skip
    return {
        "id": run.run_id,
        "epoch": run.repetition + 1,
        "input": prompt,
        "target": target,
        "messages": [{"role": "user", "content": prompt, "source": "input"},
                     {"role": "assistant", "content": text, "source": "generate", "model": model}],
        "output": {"model": model, "completion": text, "usage": usage,
                   "choices": [{"message": {"role": "assistant", "content": text, "source": "generate"},
                                "stop_reason": "stop" if run.state.completed else "unknown"}]},
        "scores": {"reviewbench": {"value": {"identified": identified, "located": located, "defects": defects,
                                             "false_positives": false_positives, "findings": len(run.findings)},
                                   "answer": text[:200], "explanation": explanation}},
        "metadata": {"case_id": run.case_id, "condition": run.condition, "state": run.state.value,
                     "prompt_sha256": run.prompt_sha256, "gold_sha256": run.gold_sha256,
                     "findings": [f.model_dump(mode="json") for f in run.findings], "error": run.error},
        "model_usage": {model: usage} if usage else {},
        "started_at": run.started_at,
        "completed_at": run.ended_at,
        "total_time": run.latency_s,
        **({"error": {"message": run.error, "traceback": "", "traceback_ansi": ""}}
           if not run.state.completed and run.error else {}),
    }  # fmt: skip


def inspect_logs(result: ScoreResult, runs: list[RunRow], corpus: Corpus, created: str) -> dict[str, dict]:
    """Per condition, its evaluation log as inspect_ai's JSON (``EvalLog``)."""
    by_run: dict[str, list] = defaultdict(list)
    for v in result.verdicts:
        by_run[v.run_id].append(v)
    patches = {}
    for case in corpus.cases:
        path = corpus.path / case.patch
        patches[case.case_id] = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    by_condition: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_condition[run.condition].append(run)
    index = {"gold": {g.case_id: g for g in corpus.gold}, "cases": {c.case_id: c for c in corpus.cases}}
    logs = {}
    for name, condition_runs in by_condition.items():
        condition_runs.sort(key=lambda r: (r.case_id, r.repetition))
        scored = result.conditions.get(name)
        metrics = {}
        for metric in RATE_METRICS:
            m = scored.metrics[metric] if scored else None
            if m is None or m.value is None:
                continue  # inspect's metric values are numbers: "not scored" is left out, never 0
            metrics[metric] = {"name": metric, "value": m.value,
                               "metadata": {"num": m.num, "den": m.den, "lo": m.lo, "hi": m.hi}}  # fmt: skip
        models = sorted({r.model_returned or r.model_requested or name for r in condition_runs})
        starts = sorted(r.started_at for r in condition_runs if r.started_at)
        ends = sorted(r.ended_at for r in condition_runs if r.ended_at)
        logs[name] = {
            "version": 2,
            "status": "success",
            "eval": {
                "run_id": f"reviewbench-{name}", "eval_id": f"reviewbench-{name}-{result.corpus.gold_sha256[:12]}",
                "created": created, "task": f"reviewbench/{name}", "task_id": name,
                "dataset": {"name": Path(result.corpus.path).name, "location": result.corpus.path,
                            "samples": len({r.case_id for r in condition_runs})},
                "model": models[0] if len(models) == 1 else "/".join(models),
                "config": {"epochs": 1 + max((r.repetition for r in condition_runs), default=0)},
                "packages": {"reviewbench": __version__},
                "metadata": {"condition": name, "gold_sha256": result.corpus.gold_sha256,
                             "models": models, "decision": scored.decision.authority if scored else None},
            },
            "results": {
                "total_samples": len(condition_runs),
                "completed_samples": sum(1 for r in condition_runs if r.state.completed),
                "scores": [{"name": "reviewbench", "scorer": "reviewbench", "metrics": metrics}],
                "headline": {"scorer": "reviewbench", "metric": HEADLINE} if HEADLINE in metrics else None,
            },
            "stats": {"started_at": _iso(starts[0] if starts else None, created),
                      "completed_at": _iso(ends[-1] if ends else None, created)},
            "samples": [_sample(r, index, by_run[r.run_id], patches) for r in condition_runs],
        }  # fmt: skip
    return logs


def log_name(name: str, created: str) -> str:
    """inspect's own file name for a log: ``<created>_<task>_<id>.json``. Its log listing (what
    ``inspect view`` shows) takes a ``.json`` file only when the name starts with an ISO time
    (``-`` for ``:``); ``_`` separates the parts, so the condition's own are spelled ``-``, and
    the id (a digest of the condition's name) keeps apart names that then look alike."""
    stamp = created.replace(":", "-")
    task = "".join(c if c.isalnum() or c in "-." else "-" for c in name)
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{stamp}_reviewbench-{task}_{digest}.json"


def write_inspect_logs(logs: dict[str, dict], out: Path) -> list[Path]:
    """One log per condition in ``out`` (created), named as inspect names its logs (see
    :func:`log_name`); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, log in logs.items():
        path = out / log_name(name, log["eval"]["created"])
        path.write_text(json.dumps(log, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written
