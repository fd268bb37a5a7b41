"""An LLM (or any) judge that labels claims, and its calibration against people.

A judge is any reviewer-kind endpoint: ``openai``, ``anthropic`` or ``command`` (the kinds a
judge class registers against, as reviewer kinds and solvers do: ``register_judge``). It sees one
claim at a time with the diff and the case's gold defects, under a frozen judge prompt::

    {"comment_id", "claim", "diff", "defects", "path", "line"}

(``path`` and ``line``: where the claim points, as the rater sees it; on stdin for a command, as the user message for a model) and answers one label object in
the import format: ``{"class", "defect_id", "fields"}``. Judge labels are rows of their
own in ``labels.sqlite`` (role ``judge``) and never replace a human label.

Calibration compares the judge with the final human labels of the labelled subset, and
runs two bias probes on the same claims: reversed order (claims asked last to first, each
with its defects listed in reverse) and a length-padded claim (boilerplate that changes no
meaning). A flip is a different class or defect link. The judge is usable only when the
registered rule holds (default: n >= 30, kappa lower bound >= 0.6, flips <= 5% each);
each actionability field is usable only when its own kappa lower bound passes.

A command judge runs in the reviewers' sandbox, with the run directory (the people's labels,
the run store naming each claim's condition), the corpus and its repository hidden: it sees
only what it is sent.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import secrets
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config.reviewers import AdapterConfig, AnthropicConfig, CommandConfig, OpenAIConfig, kind_of
from ..errors import OutputTooLarge, ReviewbenchError, ReviewerError, UsageError
from ..evidence.packets import PacketSet
from ..evidence.records import ACTIONABILITY_FIELDS, LabelClass, LabelRow
from ..evidence.resolve import final_labels
from ..evidence.stats import kappa_with_interval
from ..evidence.store import LabelStore, Role
from ..sandbox import protect
from .composition import KIND_NAMES, composition

__all__ = [
    "JUDGE_PROMPT",
    "PADDING",
    "Asker",
    "CalibrationRule",
    "ChatJudge",
    "CommandJudge",
    "JudgeError",
    "JudgeFile",
    "calibrate",
    "examples",
    "judge_claims",
    "judge_kinds",
    "load_judge",
    "make_asker",
    "register_judge",
]

JUDGE_PROMPT = """\
You label one claim made by a code reviewer about a change, following a fixed rubric.
You are given the claim, the unified diff of the change, and the known defects of the
change (possibly none). Answer with exactly one JSON object and nothing else:

{"class": C, "defect_id": D, "fields": {"location": B, "consequence": B, "evidence": B,
 "safe_fix": B, "severity_fit": B}}

C is one of "true_finding" (the claim identifies a real defect at the affected location,
not merely a broad rule), "false_positive" (it is wrong or not a defect), "duplicate"
(it repeats another claim about the same defect), "unclear" (it cannot be decided).
For a true_finding, D is the defect_id it identifies, or "valid_incidental" for a real
problem that is none of the listed defects (then add "note": a short description);
otherwise D is null. Each B is true or false: does the claim point at the affected
location, state the consequence, give checkable evidence, propose a safe fix, and fit
the defect's severity? Use null for fields when the class is not true_finding.
"""

PADDING = ("\n\nPlease note that this comment is offered in the spirit of constructive review, and it "
           "should be read in the context of the change as a whole; nothing in this paragraph adds to or "
           "changes the point made above.")  # fmt: skip
"""Boilerplate of the length probe: it makes a claim longer without changing what it says."""


class JudgeError(ReviewbenchError):
    """The judge could not be asked, or gave no usable label."""


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CalibrationRule(_Config):
    """When judge labels may count as evidence (registered with the judge)."""

    min_n: int = Field(default=30, ge=1, description="Human-labelled claims compared, at least.")
    min_kappa_lo: float = Field(default=0.6, description="Lower bound of kappa's interval, at least.")
    max_flip_share: float = Field(default=0.05, ge=0, le=1, description="Order and length flips, at most.")
    min_per_kind: int = Field(default=1, ge=0, description="Claims of each kind the human-labelled subset must "
                              "hold (true findings, safe counterexamples, subtle false positives, duplicates, "
                              "terse valid and verbose invalid comments); 0 waives it, recorded as waived.")
    terse_chars: int = Field(default=80, ge=1, description="A true finding this short or shorter is terse.")
    verbose_chars: int = Field(default=200, ge=1, description="A false positive this long or longer is verbose.")


class JudgeFile(_Config):
    """``judge.toml``: the judge endpoint, an optional prompt, the rule and the audit sample."""

    judge: Annotated[dict, Field(description="A reviewer table: kind openai, anthropic or command.")]
    prompt: str | None = Field(default=None, description="Replaces the frozen judge prompt.")
    name: str | None = Field(default=None, description="Name the judge's labels are stored under.")
    rule: CalibrationRule = Field(default_factory=CalibrationRule)
    audit_share: float = Field(default=0.1, gt=0, le=1, description="Share of judge labels drawn for a human audit.")
    audit_seed: int | None = Field(default=None, description="Seed of the audit draw; drawn and recorded if absent.")
    concurrency: int = Field(default=4, ge=1, le=64, description="Questions in flight at once (started in order).")


@dataclass(frozen=True)
class Judge:
    file: JudgeFile
    config: object
    name: str

    @property
    def prompt(self) -> str:
        return self.file.prompt or JUDGE_PROMPT


def load_judge(path: Path) -> Judge:
    """Read ``judge.toml``.

    Raises:
        UsageError: unreadable, invalid, or a kind that cannot judge.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    try:
        file = JudgeFile.model_validate(data)
        kind = file.judge.get("kind")
        registered = _JUDGES.get(kind) if isinstance(kind, str) else None
        if registered is None:
            names = list(_JUDGES)
            known = f"{', '.join(names[:-1])} or {names[-1]}"
            raise UsageError(f"{path}: judge.kind must be {known}, not {kind!r}")
        model, asker = registered
        config = model.model_validate(file.judge)  # the reviewer's own table: env, sandbox, key variable…
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{path}: {where}: {first['msg']}") from None
    name = file.name or asker.default_name(config)
    return Judge(file=file, config=config, name=name)


# -- asking ---------------------------------------------------------------------------------

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_label(text: str, comment_id: str, part: int) -> LabelRow:
    """The judge's answer as a label row (the first JSON object in ``text``).

    Raises:
        JudgeError: no JSON object, or not a valid label.
    """
    match = _OBJECT.search(text)
    if match is None:
        raise JudgeError("the judge answered no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise JudgeError(f"the judge's answer is not JSON: {exc.msg}") from None
    except RecursionError:
        raise JudgeError("the judge's answer is JSON nested too deep") from None
    if not isinstance(data, dict):
        raise JudgeError("the judge's answer is not a JSON object")
    fields = data.get("fields") or {}
    if isinstance(fields, dict):
        fields = {k: v for k, v in fields.items() if k in ACTIONABILITY_FIELDS}
    try:
        return LabelRow.model_validate({"comment_id": comment_id, "part": part, "class": data.get("class"),
                                        "defect_id": data.get("defect_id"), "fields": fields,
                                        "note": data.get("note")})  # fmt: skip
    except ValidationError as exc:
        raise JudgeError(f"the judge's label is invalid: {exc.errors()[0]['msg']}") from None


class Asker(Protocol):
    """What a judge kind does: ask one question, answer the judge's text."""

    async def ask(self, request: dict) -> str: ...

    async def aclose(self) -> None: ...


class AskerClass(Protocol):
    """A registered judge kind: built from the judge, and naming a judge left unnamed."""

    def __call__(self, judge: Judge) -> Asker: ...

    def default_name(self, config: Any) -> str: ...


_JUDGES: dict[str, tuple[type[AdapterConfig], AskerClass]] = {}


def register_judge(*configs: type[AdapterConfig]) -> Callable[[type], type]:
    """Class decorator: the judge of every config model named (by its ``kind``), as reviewer
    kinds register (``reviewers/base.py``) — the table is the reviewer's own."""

    def decorate(cls: type) -> type:
        for config in configs:
            name = kind_of(config)
            if name in _JUDGES:
                raise ValueError(f"judge kind {name!r} registered twice")
            _JUDGES[name] = (config, cls)  # type: ignore[assignment]
        return cls

    return decorate


def judge_kinds() -> dict[str, type[AdapterConfig]]:
    """Every kind a judge may be, and its config model, in registration order."""
    return {name: model for name, (model, _) in _JUDGES.items()}


@register_judge(OpenAIConfig, AnthropicConfig)
class ChatJudge:
    """A chat kind's adapter (capability ``chat``), asked through its ``complete``."""

    def __init__(self, judge: Judge) -> None:
        from ..reviewers import make_reviewer

        self.judge = judge
        self.client = make_reviewer(judge.config)

    @staticmethod
    def default_name(config: Any) -> str:
        return f"{config.kind}:{getattr(config, 'model', '')}"

    async def ask(self, request: dict) -> str:
        payload = json.dumps(request, ensure_ascii=False)
        try:
            reply = await self.client.complete(self.judge.prompt, "Label this claim.\n\n" + payload)  # type: ignore[attr-defined]
        except ReviewerError as exc:
            raise JudgeError(str(exc)) from None
        return str(reply.text)

    async def aclose(self) -> None:
        await self.client.aclose()


@register_judge(CommandConfig)
class CommandJudge:
    """A command, sandboxed like a command reviewer: the question on stdin, the label on stdout."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    @staticmethod
    def default_name(config: Any) -> str:
        return "command-judge"

    async def ask(self, request: dict) -> str:
        from ..reviewers.proc import agent_box, capped_stdout, exit_label, failure_hint, stderr_tail

        payload = json.dumps(request, ensure_ascii=False)
        command = self.judge.config.command  # type: ignore[attr-defined]
        box = agent_box(self.judge.config, f"judge command {command!r}")  # sandboxed like a reviewer
        try:
            result = await box.run(command, stdin=payload.encode("utf-8", "replace"), tree=None)
        except OSError as exc:
            raise JudgeError(f"judge command {command!r} could not start: {exc.strerror or exc}") from None
        try:
            capped_stdout(result, box)
        except OutputTooLarge as exc:
            raise JudgeError(str(exc)) from None
        if result.returncode != 0:
            raise JudgeError(f"judge command {command!r} {exit_label(result.returncode)}"
                             f"{failure_hint(result.returncode, box, result.stderr, result.refused)}; "
                             f"stderr: {stderr_tail(result.stderr)}")  # fmt: skip
        return result.stdout.decode("utf-8", "replace")

    async def aclose(self) -> None:
        pass


def make_asker(judge: Judge) -> Asker:
    """The registered judge kind of ``judge``'s config, ready to ask."""
    return _JUDGES[judge.config.kind][1](judge)  # type: ignore[attr-defined]


def examples() -> list[str]:
    """``judge.toml`` files, one or more per registered kind, that load (the shared test)."""
    return ['judge = { kind = "openai", model = "m", api_key_env = "" }',
            'name = "j"\njudge = { kind = "anthropic", base_url = "http://127.0.0.1:8080", model = "m" }',
            'judge = { kind = "command", command = "my-judge", sandbox = false, network = true }']  # fmt: skip


@dataclass(frozen=True)
class JudgeRun:
    """What one pass of the judge did."""

    labelled: list[LabelRow]
    failed: dict[tuple[str, int], str]


def _requests(packet_set: PacketSet, keys: list[tuple[str, int]], probe: str) -> list[tuple[tuple[str, int], dict]]:
    claims = {(c.comment_id, c.part): (p, c) for p in packet_set.packets for c in p.claims}
    out = []
    for key in keys:
        packet, claim = claims[key]
        defects = [d.model_dump(mode="json") for d in packet.defects]
        text = claim.text
        if probe == "reversed":
            defects.reverse()
        elif probe == "padded":
            text += PADDING
        out.append((key, {"comment_id": claim.comment_id, "claim": text, "diff": packet.diff, "defects": defects,
                          "path": claim.path, "line": claim.line}))
    if probe == "reversed":
        out.reverse()
    return out


async def _ask_all(judge: Judge, requests: list[tuple[tuple[str, int], dict]]) -> JudgeRun:
    """Ask in the given order, ``judge.file.concurrency`` at a time; results in that order."""
    asker = make_asker(judge)
    gate = asyncio.Semaphore(judge.file.concurrency)
    results: list[LabelRow | str] = []

    async def one(index: int, key: tuple[str, int], request: dict) -> None:
        try:
            results[index] = parse_label(await asker.ask(request), key[0], key[1])
        except JudgeError as exc:
            results[index] = str(exc)
        finally:
            gate.release()

    results.extend("" for _ in requests)
    tasks = []
    try:
        for index, (key, request) in enumerate(requests):
            await gate.acquire()  # requests start strictly in order
            tasks.append(asyncio.create_task(one(index, key, request)))
        await asyncio.gather(*tasks)
    finally:
        await asker.aclose()
    labelled = [r for r in results if isinstance(r, LabelRow)]
    failed = {key: r for (key, _), r in zip(requests, results, strict=True) if isinstance(r, str)}
    return JudgeRun(labelled=labelled, failed=failed)


def judge_claims(store: LabelStore, judge: Judge, keys: list[tuple[str, int]] | None = None,
                 probe: str = "") -> JudgeRun:  # fmt: skip
    """Ask the judge about ``keys`` (default: every claim, in packet order) and store its labels."""
    packet_set = store.packets()
    if keys is None:
        keys = [(c.comment_id, c.part) for p in packet_set.packets for c in p.claims]
    corpus = packet_set.corpus
    # Out of a command judge's sight, as out of a reviewer's: the people's labels and the
    # run store (which names the condition of every claim), the gold, the repository.
    with protect(store.rundir, corpus.path, corpus.meta.repo.path):
        run = asyncio.run(_ask_all(judge, _requests(packet_set, keys, probe)))
    # A judge is held to what people are: a link to one of the case's gold defects, or none.
    failed = dict(run.failed)
    for row in run.labelled:
        problem = store.check_row(row)
        if problem is not None:
            failed[(row.comment_id, row.part)] = f"the judge's label is invalid: {problem}"
    run = JudgeRun(labelled=[r for r in run.labelled if (r.comment_id, r.part) not in failed], failed=failed)
    if run.labelled:
        store.add(run.labelled, author=judge.name, role=Role.JUDGE, source="judge", probe=probe)
    return run


def audit_sample(store: LabelStore, judge: Judge, keys: list[tuple[str, int]]) -> dict:
    """A random share of judge-labelled claims for people to check, with its seed recorded."""
    seed = judge.file.audit_seed
    if seed is None:
        recorded = store.get_meta(f"audit_seed:{judge.name}")
        seed = int(recorded) if recorded is not None else secrets.randbelow(2**31)
    store.set_meta(f"audit_seed:{judge.name}", str(seed))
    ordered = sorted(keys)
    size = min(len(ordered), math.ceil(judge.file.audit_share * len(ordered)))
    chosen = sorted(random.Random(seed).sample(ordered, size))
    return {"seed": seed, "share": judge.file.audit_share, "claims": [{"comment_id": k[0], "part": k[1]} for k in chosen]}


# -- calibration ----------------------------------------------------------------------------


def _link(row: LabelRow) -> tuple[str, str | None]:
    return (row.label_class.value, row.defect_id)


DISAGREEMENTS = 5
"""Claims where the judge and people differ, shown with a calibration."""


def disagreements(packet_set: PacketSet, keys: list[tuple[str, int]], human: list[LabelRow],
                  machine: list[LabelRow], limit: int = DISAGREEMENTS) -> list[dict[str, Any]]:  # fmt: skip
    """The first ``limit`` claims (in packet order) whose class or defect link the judge gave
    otherwise than people: the claim's text (untrusted), both labels. Their count is beside."""
    text = {(c.comment_id, c.part): c.text for p in packet_set.packets for c in p.claims}
    out: list[dict[str, Any]] = []
    for key, h, m in zip(keys, human, machine, strict=True):
        if _link(h) != _link(m) and len(out) < limit:
            out.append({"comment_id": key[0], "part": key[1], "claim": text.get(key, "")[:300],
                        "human": {"class": h.label_class.value, "defect_id": h.defect_id},
                        "judge": {"class": m.label_class.value, "defect_id": m.defect_id}})  # fmt: skip
    return out


def calibrate(store: LabelStore, judge: Judge, *, resamples: int = 2000, seed: int = 0) -> dict:
    """Compare the judge with final human labels and probe it; record and return the result.

    The JSON contract: ``{"n", "kappa", "kappa_lo", "kappa_hi", "confusion", "order_flips",
    "length_flips", "usable"}``, plus per-class and per-field detail and the reasons.
    """
    packet_set = store.packets()
    finals = final_labels(store)
    rule = judge.file.rule
    kinds = composition(packet_set, {k: row for k, (row, _) in finals.items()}, min_per_kind=rule.min_per_kind,
                        terse_chars=rule.terse_chars, verbose_chars=rule.verbose_chars)  # fmt: skip
    if kinds.missing:  # refused before the judge is asked anything
        names = ", ".join(KIND_NAMES[kind] for kind in kinds.missing)
        raise UsageError(f"the human-labelled claims lack what calibration needs (at least {rule.min_per_kind} of "
                         f"each kind): too few {names} (has {kinds.describe()}); label such claims first, or "
                         "set min_per_kind = 0 under [rule] in the judge file (recorded as waived)")  # fmt: skip
    packet_order = [key for key in store.claims() if key in finals]
    plain = store.latest(Role.JUDGE).get(judge.name, {})
    missing = [key for key in packet_order if key not in plain]
    failed: dict = {}
    if missing:
        failed.update(judge_claims(store, judge, missing).failed)
        plain = store.latest(Role.JUDGE).get(judge.name, {})
    keys = [key for key in packet_order if key in plain]
    probes = {}
    for probe in ("reversed", "padded"):
        run = judge_claims(store, judge, keys, probe=probe)
        failed.update(run.failed)
        probes[probe] = {(r.comment_id, r.part): r for r in run.labelled}
    human = [finals[k][0] for k in keys]
    machine = [plain[k].row for k in keys]
    classes = kappa_with_interval([r.label_class.value for r in human], [r.label_class.value for r in machine],
                                  resamples=resamples, seed=seed)  # fmt: skip
    flips = {probe: sum(1 for k in keys if k not in probes[probe] or _link(probes[probe][k]) != _link(plain[k].row))
             for probe in probes}  # fmt: skip
    n = len(keys)
    reasons = []
    if n < rule.min_n:
        reasons.append(f"only {n} human-labelled claims compared (rule: at least {rule.min_n})")
    if classes.kappa_lo is None or classes.kappa_lo < rule.min_kappa_lo:
        reasons.append(f"kappa lower bound {classes.kappa_lo} below {rule.min_kappa_lo}")
    for probe, label in (("reversed", "order"), ("padded", "length")):
        if n and flips[probe] / n > rule.max_flip_share:
            reasons.append(f"{flips[probe]}/{n} labels flip on {label} (rule: at most {rule.max_flip_share:.0%})")
    per_class = {}
    for cls in LabelClass:
        per_class[cls.value] = {
            "human": sum(r.label_class is cls for r in human),
            "judge": sum(r.label_class is cls for r in machine),
            "both": sum(h.label_class is cls and m.label_class is cls for h, m in zip(human, machine, strict=True)),
        }
    fields = {}
    for name in ACTIONABILITY_FIELDS:
        both = [(getattr(h.fields, name), getattr(m.fields, name)) for h, m in zip(human, machine, strict=True)
                if getattr(h.fields, name) is not None and getattr(m.fields, name) is not None]  # fmt: skip
        k = kappa_with_interval(["yes" if h else "no" for h, _ in both], ["yes" if m else "no" for _, m in both],
                                resamples=resamples, seed=seed)  # fmt: skip
        fields[name] = {**k.as_dict(), "usable": bool(k.kappa_lo is not None and k.kappa_lo >= rule.min_kappa_lo
                                                      and k.n >= rule.min_n)}  # fmt: skip
    judged = [key for key in store.latest(Role.JUDGE).get(judge.name, {}) if key not in finals]
    result = {
        "judge": judge.name, "n": n, "kappa": classes.kappa, "kappa_lo": classes.kappa_lo,
        "kappa_hi": classes.kappa_hi, "percent_agreement": classes.percent_agreement,
        "confusion": classes.confusion, "order_flips": flips["reversed"], "length_flips": flips["padded"],
        "usable": not reasons, "reasons": reasons, "classes": per_class, "fields": fields,
        "rule": rule.model_dump(), "failed": len(failed), "audit": audit_sample(store, judge, judged),
        "composition": kinds.as_dict(), "disagreements": disagreements(packet_set, keys, human, machine),
        "disagreement_count": sum(_link(h) != _link(m) for h, m in zip(human, machine, strict=True)),
    }  # fmt: skip
    store.add_calibration(judge.name, result)
    return result
