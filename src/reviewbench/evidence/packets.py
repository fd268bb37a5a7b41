"""De-identified labelling packets, built from a run directory and its corpus (read-only).

One packet per review that produced findings. Ids are keyed hashes (HMAC-SHA256 under a
random secret kept in ``labels.sqlite``): stable across exports, yet a rater who knows the
experiment cannot recompute them, whereas a run id is a plain hash of case, condition and
repetition. The claim order inside a packet and the packet order of an export are fixed
random permutations drawn from the same secret, so neither follows the condition.

A claim is labelled once per case: comments of the same case with the same normalised text
at the same place (path and line) are one claim, shown in one packet, whatever run or
repetition wrote them; its label applies to every copy. The n-th copy within one review
matches the n-th of another, so a review that says one thing twice still shows it twice
(the second may be a duplicate). A packet whose claims all appear elsewhere is not
exported, so raters never see that repetitions exist.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import CorpusError
from ..records import GoldRecord, RunRow, RunState
from ..store.corpus import Corpus, read_recorded_corpus
from ..store.runs import RUNS_DB, RunStore
from .records import LabelPacket, PacketClaim, PacketDefect, PacketLocation, PacketTests

__all__ = ["ClaimIdentity", "ClaimRef", "PacketSet", "build_packets", "comment_identities", "comment_key", "corpus_of",
           "normalise", "review_identities", "split_claim"]

SPLIT_OVER = 240
"""A comment longer than this many characters is split into sentences when it has several."""

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")


def comment_key(run_id: str, index: int) -> str:
    """The comment id of the run store and of issue 13's verdicts: ``"<run_id>:<index>"``."""
    return f"{run_id}:{index}"


def split_claim(text: str) -> list[str]:
    """A comment as atomic claims: its bullet items, and the sentences of a long paragraph.

    Short comments stay whole; so does a long one made of a single sentence.
    """
    text = text.strip()
    items = [part.strip() for part in _BULLET.split(text)] if len(_BULLET.findall(text)) >= 2 else [text]
    items = [item for item in items if item]
    parts: list[str] = []
    for item in items:
        if len(item) > SPLIT_OVER:
            sentences = [s.strip() for s in _SENTENCE.split(item) if s.strip()]
            parts.extend(sentences)
        else:
            parts.append(item)
    return parts or [text]


def normalise(text: str) -> str:
    """A claim's text as compared for identity: NFC, case-folded, runs of white space as one space."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


@dataclass(frozen=True)
class ClaimIdentity:
    """What makes reviewer comments one claim: the same case, the same place (path and line,
    as parsed), the same normalised atomic parts, and the same occurrence among its review's
    comments with that case, place and text (the n-th copy matches the n-th). It is what a
    rater is shown of a claim beside its case, so one label holds for every comment with it:
    within a run directory (packets) and from one run directory to another (``label carry``)."""

    case_id: str
    path: str | None
    line: int | None
    parts: tuple[str, ...]
    occurrence: int


def review_identities(run: RunRow) -> list[tuple[ClaimIdentity, int, list[str]]]:
    """Each finding of ``run``: its identity, its index in the run and its atomic parts."""
    seen: dict[tuple[object, ...], int] = {}
    out = []
    for index, finding in enumerate(run.findings):
        parts = split_claim(finding.claim)
        base = (run.case_id, finding.path, finding.line, tuple(normalise(p) for p in parts))
        seen[base] = seen.get(base, 0) + 1
        out.append((ClaimIdentity(run.case_id, finding.path, finding.line, base[3], seen[base]), index, parts))
    return out


def _labelled_runs(store: RunStore) -> list[RunRow]:
    """The runs whose comments are labelled: completed reviews with findings."""
    return [r for r in store.runs() if r.state == RunState.COMPLETED_FINDINGS.value and r.findings]


def comment_identities(rundir: Path) -> dict[str, ClaimIdentity]:
    """The identity of every comment of ``rundir``'s reviews, by run-store comment id
    (``"<run_id>:<index>"``); the run store is only read.

    Raises:
        CorpusError: not a run directory.
    """
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = _labelled_runs(store)
    finally:
        store.close()
    return {comment_key(run.run_id, index): identity for run in runs for identity, index, _ in review_identities(run)}


@dataclass(frozen=True)
class ClaimRef:
    """Where an atomic claim of a packet comes from (kept out of packets).

    One per run-store comment: identical comments of a case share ``comment_id``, ``part``,
    ``packet_id`` and ``text`` (those of the copy shown) and differ in ``source_id``.
    """

    comment_id: str
    """Opaque, as in the packet."""
    part: int
    parts: int
    source_id: str
    """``"<run_id>:<index>"`` in the run store."""
    run_id: str
    index: int
    case_id: str
    packet_id: str
    text: str


@dataclass(frozen=True)
class PacketSet:
    """Every packet of a run directory, in export order, with the map back to the runs."""

    packets: list[LabelPacket]
    claims: list[ClaimRef]
    """The claims shown, one per (comment_id, part), each with the comment of the copy shown."""
    sources: list[ClaimRef]
    """Every run-store comment's parts, each under the claim that shows it (identical copies included)."""
    corpus: Corpus


def _mac(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "\0".join(parts).encode(), hashlib.sha256).hexdigest()


LOG_TAIL = 4000
"""Characters kept from the end of a case's validation log."""

LOG_DIR = "logs"
"""Where validation writes one log per case (``validate._api.LOG_DIR``; a test keeps them equal)."""


def _log_tail(corpus: Corpus, case_id: str) -> str | None:
    """The end of ``logs/<case>.log`` (what the tests printed), never through a symlink."""
    path = corpus.path / LOG_DIR / f"{case_id}.log"
    if path.is_symlink() or (corpus.path / LOG_DIR).is_symlink() or not path.is_file():
        return None
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - LOG_TAIL * 4))
        text = handle.read().decode("utf-8", "replace")
    return text[-LOG_TAIL:]


def _tests(corpus: Corpus, gold: GoldRecord | None) -> PacketTests:
    v = gold.validation if gold else None
    if gold is None or v is None:
        return PacketTests(status=None)
    return PacketTests(status=v.status.value, test_cmd=v.test_cmd, exit_code=v.exit_code,
                       failing_tests=list(v.failing_tests), output=_log_tail(corpus, gold.case_id))  # fmt: skip


def _defects(gold: GoldRecord | None) -> list[PacketDefect]:
    out = []
    for d in gold.defects if gold else []:
        description = d.description.strip() or f"{d.defect_class} defect" + (
            f" in {', '.join(d.symbols)}" if d.symbols else "")  # fmt: skip
        out.append(PacketDefect(
            defect_id=d.defect_id, description=description,
            locations=[PacketLocation(path=loc.path, start_line=loc.start_line, end_line=loc.end_line)
                       for loc in d.locations],
        ))  # fmt: skip
    return out


def _diff(corpus: Corpus, patch: str) -> str:
    root = corpus.path.resolve()
    target = (corpus.path / patch).resolve()
    if not target.is_relative_to(root) or (corpus.path / patch).is_symlink() or not target.is_file():
        raise CorpusError(f"{corpus.path}: patch {patch!r} is missing or outside the corpus")
    return target.read_bytes().decode("utf-8", "replace")


def corpus_of(rundir: Path) -> Corpus:
    """The corpus a run directory was run on (checked against the gold it recorded)."""
    store = RunStore(rundir / RUNS_DB)
    try:
        corpus_path = store.get_meta("corpus_path")
        recorded_gold = store.get_meta("gold_sha256")
    finally:
        store.close()
    return read_recorded_corpus(rundir, corpus_path, recorded_gold, "labels")


def build_packets(rundir: Path, secret: bytes, known: Mapping[str, Collection[str]] | None = None,
                  labelled: Mapping[str, int] | None = None) -> PacketSet:
    """Packets of every completed review with findings in ``rundir``, each distinct claim once.

    Args:
        known: the comment ids each run-store comment was exported under before (the label
            store's map): a claim keeps its id as runs are added, and labels stay with it.
        labelled: label rows per comment id; among identical comments exported under
            different ids before (one id per comment, as once), the id with the most labels
            is kept.

    Raises:
        CorpusError: the run directory or its corpus is missing or damaged.
        UsageError: the corpus's gold changed since the runs.
    """
    known, labelled = known or {}, labelled or {}
    corpus = corpus_of(rundir)
    cases = {c.case_id: c for c in corpus.cases}
    gold = {g.case_id: g for g in corpus.gold}
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = _labelled_runs(store)
    finally:
        store.close()
    # Identical comments of a case: same place, same normalised parts, same occurrence in its
    # review. Each is shown in the first review of the export order that has it, so identical
    # reviews collapse into one packet and a review's claims are not scattered.
    runs.sort(key=lambda r: _mac(secret, "packet-order", "p" + _mac(secret, "packet", r.run_id)[:12]))
    groups: dict[ClaimIdentity, list[tuple[str, RunRow, int, list[str], str]]] = {}
    for run in runs:
        if run.case_id not in cases:
            continue  # a run of a case the corpus no longer has: nothing to show
        for identity, index, parts in review_identities(run):
            groups.setdefault(identity, []).append(
                (comment_key(run.run_id, index), run, index, parts, "p" + _mac(secret, "packet", run.run_id)[:12]))
    shown: dict[str, list[tuple[str, PacketClaim]]] = {}
    claims: list[ClaimRef] = []
    sources: list[ClaimRef] = []
    for copies in groups.values():
        own = {source: "c" + _mac(secret, "comment", source)[:12] for source, *_ in copies}
        earlier = {cid for source in own for cid in known.get(source, ())}
        chosen = min(earlier, key=lambda c: (-labelled.get(c, 0), c)) if earlier else own[copies[0][0]]
        source, run, index, parts, packet_id = copies[0]
        finding = run.findings[index]
        for part, text in enumerate(parts):
            claim = PacketClaim(comment_id=chosen, part=part, parts=len(parts), path=finding.path,
                                line=finding.line, text=text)  # fmt: skip
            # Parts of one comment stay together, in their own order; comments are shuffled.
            shown.setdefault(packet_id, []).append((_mac(secret, "order", source) + f"{part:04d}", claim))
            claims.append(ClaimRef(comment_id=chosen, part=part, parts=len(parts), source_id=source,
                                   run_id=run.run_id, index=index, case_id=run.case_id, packet_id=packet_id,
                                   text=text))  # fmt: skip
            sources.extend(ClaimRef(comment_id=chosen, part=part, parts=len(parts), source_id=other,
                                    run_id=other_run.run_id, index=other_index, case_id=run.case_id,
                                    packet_id=packet_id, text=text)
                           for other, other_run, other_index, *_ in copies)  # fmt: skip
    diffs: dict[str, str] = {}
    tests: dict[str, PacketTests] = {}
    packets: list[LabelPacket] = []
    for run in runs:
        packet_id = "p" + _mac(secret, "packet", run.run_id)[:12]
        if packet_id not in shown:
            continue  # every claim of this review is shown in another packet of its case
        case = cases[run.case_id]
        if case.case_id not in diffs:
            diffs[case.case_id] = _diff(corpus, case.patch)
            tests[case.case_id] = _tests(corpus, gold.get(case.case_id))
        packets.append(LabelPacket(
            packet_id=packet_id, title=case.title, paths=list(case.paths), diff=diffs[case.case_id],
            tests=tests[case.case_id], defects=_defects(gold.get(case.case_id)),
            claims=[claim for _, claim in sorted(shown[packet_id], key=lambda item: item[0])],
        ))  # fmt: skip
    packets.sort(key=lambda p: _mac(secret, "packet-order", p.packet_id))
    order = {p.packet_id: n for n, p in enumerate(packets)}
    claims.sort(key=lambda c: (order[c.packet_id], _mac(secret, "order", c.source_id), c.part))
    return PacketSet(packets=packets, claims=claims, sources=sources, corpus=corpus)
