"""Review runs: reviewers on the cases of a corpus, through the run engine.

Runs are planned as case × condition × repetition (rename variants included when asked),
shuffled by the experiment's seed so conditions interleave in time; the engine
(:mod:`reviewbench.engine`) executes them under each condition's limits and records each
once. :class:`ReviewJob` says what a review run asks and how its answer is read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from dataclasses import replace
from pathlib import Path

from .._version import __version__
from ..config.registration import needs_data_controls
from ..engine import (
    Condition,
    OnUpdate,
    Outcome,
    PlannedRun,
    RetryRule,
    RunSummary,
    execute_plan,
    open_run_store,
    run_id,
)
from ..errors import EndpointUnreachable, TooManyFindings, UsageError
from ..records import Case, RunState
from ..reviewers import make_reviewer
from ..reviewers.base import RUN_SCOPE, RunScope
from ..reviewers.preflight import preflight
from ..reviewers.reach import endpoint_problems
from ..sandbox import protect
from ..store.corpus import Corpus, read_corpus
from ..store.runs import ALLOCATION_FILE, CachedReply
from .experiment import ConditionConfig, Experiment
from .guidance import (
    GUIDANCE_NAME,
    GuidanceSet,
    applicable,
    git_blob_sha,
    load_guidance,
    native_guidance,
)
from .packet import PacketBuilder
from .parse import parse_review
from .prompt import load_prompt, load_text

__all__ = ["ALLOCATION_FILE", "ReviewJob", "check_conditions", "check_data_controls", "check_reachable", "plan_runs", "run_experiment",
           "write_allocation"]

ORIGINAL = "original"
RENAME = "rename"


def plan_runs(experiment: Experiment, corpus: Corpus) -> list[PlannedRun]:
    """Every run of the experiment, in the seeded, interleaved order."""
    variant_of = {g.case_id: g.variant_of for g in corpus.gold}
    runs = [
        PlannedRun(
            run_id=run_id(case.case_id, condition.name, repetition),
            item_id=case.case_id,
            case=case,
            condition=condition,
            repetition=repetition,
            variant=RENAME if variant_of.get(case.case_id) else ORIGINAL,
        )
        for case in corpus.cases
        if experiment.config.rename or not variant_of.get(case.case_id)
        for condition in experiment.config.condition
        for repetition in range(experiment.config.repeats)
    ]
    random.Random(experiment.config.seed).shuffle(runs)
    return [replace(run, position=i) for i, run in enumerate(runs)]


def write_allocation(plan: list[PlannedRun], out: Path) -> Path:
    """``RUNDIR/allocation.jsonl``: the seeded order (case, repetition, condition, position),
    written once, at the first run, so the randomisation can be shown as it was."""
    path = out / ALLOCATION_FILE
    if not path.exists():
        lines = [json.dumps({"position": r.position, "run_id": r.run_id, "case_id": r.item_id,
                             "repetition": r.repetition, "condition": r.condition.name, "variant": r.variant},
                            sort_keys=True) for r in plan]  # fmt: skip
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        tmp.replace(path)
    return path


def _packet_digest(packet_json: str, condition: Condition) -> str:
    """What a response depends on, but the repetition: the packet and the reviewer's settings."""
    fingerprint = json.dumps({"reviewer": condition.params, "context": condition.config.context},
                             sort_keys=True)  # fmt: skip
    return hashlib.sha256(f"{packet_json}\0{fingerprint}".encode()).hexdigest()



def _outcome(reply: CachedReply, paths: list[str]) -> tuple[RunState, list, list[str]]:
    """Terminal state, findings and unparsed lines of a reply."""
    if reply.findings is not None:
        findings, unparsed, no_issues = list(reply.findings), [], True
    else:
        parsed = parse_review(reply.text, paths)
        findings, unparsed, no_issues = list(parsed.findings), list(parsed.unparsed), parsed.no_issues
    if findings:
        return RunState.COMPLETED_FINDINGS, findings, unparsed
    if no_issues:
        return RunState.COMPLETED_NO_FINDINGS, findings, unparsed
    return RunState.INVALID, findings, unparsed  # no finding and no NO_ISSUES: not a review


class ReviewJob:
    """Review runs: reviewers on the cases of a corpus."""

    def __init__(self, experiment: Experiment, corpus: Corpus) -> None:
        self.experiment = experiment
        self.corpus = corpus
        self.gold_sha256 = corpus.meta.gold_sha256
        self.builder = PacketBuilder(corpus.path, Path(corpus.meta.repo.path), corpus.gold)
        self._packets: dict[tuple[str, str], tuple[object, str]] = {}
        self._guidance: dict[str, GuidanceSet | None] = {}
        self._blobs: dict[tuple[str, str], dict[str, str] | None] = {}

    def condition(self, config: ConditionConfig) -> Condition:
        prompt = load_prompt(config.prompt, self.experiment.base)
        guidance = guidance_sha = None
        files = load_guidance(config, self.experiment.base)
        if config.guidance:
            guidance = load_text((self.experiment.base / config.guidance).resolve(), "guidance")
            guidance_sha = hashlib.sha256(guidance.encode()).hexdigest()
            if config.reviewer.capabilities.opens_pull_requests:  # a bot reads guidance from the repository
                files = GuidanceSet(files={GUIDANCE_NAME: guidance.encode("utf-8")})
        elif files is not None:
            guidance_sha = files.sha256
        self._guidance[config.name] = files
        return Condition(config=config, agent_config=config.reviewer, prompt=prompt, guidance=guidance,
                         guidance_sha256=guidance_sha, agent=make_reviewer(config.reviewer))  # fmt: skip

    async def packet(self, planned: PlannedRun, condition: Condition) -> tuple[object, str]:
        """The packet of (case, condition) and its digest, built once and shared by repetitions."""
        case: Case = planned.case
        config = condition.config
        if config.context == "tree":  # exported before the cache is read, as it always was
            await asyncio.to_thread(self.builder.tree, case)
        slot = (case.case_id, config.name)
        if slot not in self._packets:
            render = condition.prompt.render(case.language)
            files = self._guidance.get(config.name)
            guidance = condition.guidance
            if files is not None and not config.reviewer.capabilities.opens_pull_requests:
                guidance = files.text_for(case.paths)  # the applicable files' text, as the prompt's guidance
            if config.context == "diff":  # a small file read: not worth a thread hop
                packet = self.builder.packet(case, render, guidance, config.context)
            else:
                packet = await asyncio.to_thread(self.builder.packet, case, render, guidance, config.context)
            if files is not None and config.reviewer.capabilities.opens_pull_requests:
                packet = packet.model_copy(update={"guidance": None, "guidance_files": {
                    path: data.decode("utf-8") for path, data in files.files.items()}})  # fmt: skip
            # A packet without a tree note or guidance files digests as it did before they
            # existed: caches stay valid.
            unset = {name for name, empty in (("tree_note", packet.tree_note is None),
                                              ("guidance_files", not packet.guidance_files)) if empty}  # fmt: skip
            shown = packet.model_dump_json(exclude=unset or None)
            self._packets[slot] = (packet, _packet_digest(shown, condition))
        return self._packets[slot]

    def guidance_blobs(self, planned: PlannedRun, condition: Condition) -> dict[str, str] | None:
        """Path -> git blob SHA of every guidance file applying to the run's changed paths:
        for forge kinds, those of the pushed tree (the case's own and the placed ones); for
        others, the placed ones they were given. None: a condition without guidance files."""
        config = condition.config
        slot = (planned.case.case_id, config.name)
        if slot not in self._blobs:
            files = self._guidance.get(config.name)
            forge = config.reviewer.capabilities.opens_pull_requests
            if files is None and not forge:
                self._blobs[slot] = None
            else:
                placed = files.files if files is not None else {}
                scope = files.scope if files is not None else "ancestors"
                names = files.names if files is not None else {GUIDANCE_NAME}
                seen = dict(placed)
                if forge:
                    seen = {**native_guidance(self.builder.tree(planned.case), planned.case.paths, names), **placed}
                chosen = applicable(seen, planned.case.paths, scope)
                self._blobs[slot] = {path: git_blob_sha(data) for path, data in chosen.items()}
        return self._blobs[slot]

    async def attempt(self, planned: PlannedRun, condition: Condition, packet: object) -> CachedReply:
        scope = RUN_SCOPE.get()
        if scope is not None:  # this task's copy of the context: the run's id for this attempt
            RUN_SCOPE.set(replace(scope, run_id=planned.run_id))
        tree = self.builder.tree(planned.case) if condition.config.context == "tree" else None  # exported above
        got = await asyncio.wait_for(condition.agent.review(packet, tree), timeout=condition.config.timeout_s)
        return CachedReply(got.text, got.model, got.tokens_in, got.tokens_out, got.findings, notes=got.notes)

    def outcome(self, planned: PlannedRun, reply: CachedReply) -> Outcome:
        """The run's state and findings.

        Raises:
            TooManyFindings: more findings than the reviewer's ``max_findings``; the engine
                records the run ``invalid``, as for the byte cap.
        """
        state, findings, unparsed = _outcome(reply, planned.case.paths)
        cap = planned.condition.reviewer.max_findings
        if len(findings) > cap:
            raise TooManyFindings(f"the review holds {len(findings)} findings, more than its max_findings ({cap}): "
                                  "none is kept, the text is the raw output", head=reply.text)  # fmt: skip
        return Outcome(state, findings, unparsed)

    def close(self) -> None:
        self.builder.close()



def check_conditions(path: Path, conditions: list[tuple[str, object, str | None]], *, keys: bool = True) -> None:
    """Refuse, before any run, a condition whose adapter cannot work (see ``preflight``;
    ``keys``: also the key variables of this environment).

    Raises:
        UsageError: naming the file, the condition and the mistake.
    """
    for name, config, context in conditions:
        problem = preflight(config, context, keys=keys)
        if problem:
            raise UsageError(f"{path}: condition {name}: {problem}")


def check_data_controls(experiment: Experiment) -> None:
    """Refuse an experiment that sends code to a service (a chat API or a forge off this
    machine's loopback) without saying, in its ``[registration]`` table, under which account,
    workspace, data settings and retention, and who may read the raw outputs.

    Raises:
        UsageError: naming the file, the first such condition and what to add.
    """
    plan = experiment.config.registration
    if plan is not None and plan.data_controls is not None:
        return
    sending = [(c.name, kind) for c in experiment.config.condition if (kind := needs_data_controls(c.reviewer))]
    if sending:
        name, kind = sending[0]
        more = f" (and {len(sending) - 1} more condition(s))" if len(sending) > 1 else ""
        what = "a chat API" if kind == "api" else "a forge"
        raise UsageError(f"{experiment.path}: condition {name} sends the cases' code to {what}{more}: give "
                         "[registration] data_controls (account_type, workspace, data_settings, retention, "
                         "raw_output_readers) before any run")  # fmt: skip


def check_reachable(experiment: Experiment) -> None:
    """Refuse, before anything is planned, a condition whose endpoint cannot serve a run.

    Raises:
        EndpointUnreachable: naming the condition, the endpoint and the cause, once per file
            (the first condition; how many others share the problem is said).
    """
    problems = endpoint_problems([(c.name, c.reviewer) for c in experiment.config.condition])
    if problems:
        name, problem = problems[0]
        more = f" (and {len(problems) - 1} more condition(s))" if len(problems) > 1 else ""
        raise EndpointUnreachable(f"{experiment.path}: condition {name}: {problem}{more}; start the server or "
                                  "fix base_url and the key, then run again (nothing was run)")  # fmt: skip


def run_experiment(
    experiment: Experiment,
    out: Path,
    *,
    retry_failed: bool = False,
    on_update: OnUpdate | None = None,
    check_endpoints: bool = True,
) -> RunSummary:
    """Run (or resume) every planned run of ``experiment`` into run directory ``out``.

    ``check_endpoints``: first ask each HTTP endpoint once (:func:`check_reachable`); off,
    an unreachable endpoint fails its runs instead (until its condition is stopped).

    Raises:
        EndpointUnreachable: an endpoint refused, was not found, or rejected the key
            (nothing planned, nothing recorded).
        CorpusError: the corpus is missing or damaged.
        UsageError: a condition cannot run (no key, a bad URL, sarif without a tree), or
            ``out`` holds runs of another experiment or of a changed corpus.
    """
    check_conditions(experiment.path, [(c.name, c.reviewer, c.context) for c in experiment.config.condition])
    if check_endpoints:
        check_reachable(experiment)
    check_data_controls(experiment)  # after: asking an endpoint once sends it no code
    corpus = read_corpus(experiment.corpus_path)
    store = open_run_store(out)
    try:
        store.check_meta(
            {"experiment_sha256": experiment.sha256, "gold_sha256": corpus.meta.gold_sha256,
             "inputs_sha256": experiment.inputs_sha256()},
            {"experiment_sha256": "experiment", "gold_sha256": "corpus (its gold.jsonl changed)",
             "inputs_sha256": "prompt or guidance text (a prompt or guidance file was edited)"},
        )
        store.seal_registration()  # from now on, registration.json must stay as it is
        store.set_meta({
            "experiment": json.dumps(experiment.config.model_dump(mode="json"), sort_keys=True),
            "experiment_path": str(experiment.path),
            "corpus_path": str(corpus.path),
            "tool_version": __version__,
        })  # fmt: skip
        plan = plan_runs(experiment, corpus)
        write_allocation(plan, out)
        # Forge reviewers mark what they open with the run directory, to find it again on resume.
        scope = RUN_SCOPE.set(RunScope(experiment=hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]))
        try:  # out of the command reviewers' sight: the gold, the repository's history, the runs
            with protect(corpus.path, corpus.meta.repo.path, out):
                config = experiment.config
                rule = RetryRule(config.max_retries, None if config.retry_on is None else frozenset(config.retry_on))
                return execute_plan(ReviewJob(experiment, corpus), config.condition, plan, store, out,
                                    retry_failed=retry_failed, retry=rule, on_update=on_update)  # fmt: skip
        finally:
            RUN_SCOPE.reset(scope)
    finally:
        store.close()
