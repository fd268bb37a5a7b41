"""The demo's human labels: two scripted raters, an adjudicator and a command judge.

The demo has no people, so its raters follow a written rule, and they go through exactly
the path people's labels take (packets exported, JSONL files imported with ``label import``).
The rule: a claim is a true finding only when it points into a gold defect's
lines *and* says something specific (names code or a rule); a broad remark ("possible
defect in this change") is not an identification, wherever it sits. A specific claim away from every defect is a valid
incidental finding (the demo's only specific reviewer is ruff, whose claims are real).

The second rater departs from the rule on a few claims (a broad remark on a defect line
called ``unclear``; one true finding judged to have an unsafe fix), so agreement is not
perfect and the adjudicator has something to settle. The judge is a deterministic command
applying the same rule; it is calibrated against the adjudicated labels like any other.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..evidence.records import LabelPacket, PacketClaim
from ..label import (
    LabelStore,
    agreement,
    export_packets,
    import_labels,
    label_metrics,
    label_verdicts,
)
from ..label.judge import calibrate, load_judge

__all__ = ["BROAD_CLAIMS", "SPECIFIC", "LabelDemo", "label_demo", "rule_label"]

BROAD_CLAIMS = ("possible defect in this change",)
"""The broad remark of the demo's ``flag_all`` baseline."""

SPECIFIC = r"`[^`]+`|\b[A-Z]+[0-9]{2,}\b"
"""A claim is specific when it names code (a backticked name) or a rule (``F841``)."""

TOLERANCE = 3
"""Lines either side of a defect's location that still point at it."""

DISAGREE_BROAD = 3
"""How many broad remarks on defect lines the second rater calls ``unclear``."""

_FIELDS = {"location": True, "consequence": False, "evidence": True, "safe_fix": True, "severity_fit": False}

JUDGE_SCRIPT = '''\
"""The demo's command judge: the demo raters' rule, applied to one claim from stdin."""
import json, sys
import re
request = json.load(sys.stdin)
claim, path, line = request["claim"].strip(), request.get("path"), request.get("line")
label = {{"class": "false_positive", "defect_id": None, "fields": {{}}}}
if re.search({specific!r}, claim):
    hit = next((d for d in request["defects"] for loc in d["locations"]
                if path == loc["path"] and line is not None
                and loc["start_line"] - {tol} <= line <= loc["end_line"] + {tol}), None)
    label = {{"class": "true_finding", "defect_id": hit["defect_id"] if hit else "valid_incidental",
              "fields": {fields!r}}}
    if hit is None:
        label["note"] = "a real problem outside the gold defects: " + claim[:80]
print(json.dumps(label))
'''


def _defect_at(packet: LabelPacket, claim: PacketClaim) -> str | None:
    for defect in packet.defects:
        for loc in defect.locations:
            if (claim.path == loc.path and claim.line is not None
                    and loc.start_line - TOLERANCE <= claim.line <= loc.end_line + TOLERANCE):  # fmt: skip
                return defect.defect_id
    return None


def rule_label(packet: LabelPacket, claim: PacketClaim) -> dict:
    """The demo raters' rule for one claim, as an import row."""
    row = {"comment_id": claim.comment_id, "part": claim.part, "class": "false_positive", "defect_id": None,
           "fields": {}, "note": None}  # fmt: skip
    if not re.search(SPECIFIC, claim.text):
        return row
    defect = _defect_at(packet, claim)
    row.update({"class": "true_finding", "defect_id": defect or "valid_incidental", "fields": dict(_FIELDS)})
    if defect is None:
        row["note"] = "a real problem outside the gold defects: " + claim.text.strip()[:80]
    return row


def _stable(packet: LabelPacket, claim: PacketClaim) -> str:
    # Independent of the run directory's secret, so the same claims differ in every demo.
    text = f"{packet.diff}\0{claim.path}\0{claim.line}\0{claim.text}\0{claim.part}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class LabelDemo:
    """Where the demo's labels went, and what came of them."""

    folder: Path
    claims: int
    disputed: int
    agreement: dict
    calibration: dict
    verdicts: int
    actionability: dict
    triage_minutes: dict


def _seconds(packet: LabelPacket, claim: PacketClaim, rater: str) -> float:
    # Scripted "triage time": a fixed, plausible number per claim (longer for longer diffs).
    digest = int(_stable(packet, claim)[:6], 16)
    return round(8 + len(packet.diff) / 200 + digest % 7 + (3 if rater == "ben" else 0), 1)


def label_demo(rundir: Path, folder: Path) -> LabelDemo:
    """Label every claim of the demo's runs and calibrate the command judge; files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    export_packets(rundir, folder / "packets.jsonl")
    packets = [LabelPacket.model_validate_json(line) for line in (folder / "packets.jsonl").read_bytes().splitlines()]
    pairs = [(p, c) for p in packets for c in p.claims]
    ana, ben, ada = [], [], []
    broad_on_defects = sorted((_stable(p, c), i) for i, (p, c) in enumerate(pairs)
                              if c.text.strip() in BROAD_CLAIMS and _defect_at(p, c))  # fmt: skip
    true_found = sorted((_stable(p, c), i) for i, (p, c) in enumerate(pairs)
                        if rule_label(p, c)["defect_id"] not in (None, "valid_incidental"))  # fmt: skip
    differ_unclear = {i for _, i in broad_on_defects[:DISAGREE_BROAD]}
    differ_fix = {i for _, i in true_found[:1]}
    for i, (packet, claim) in enumerate(pairs):
        row = rule_label(packet, claim)
        ana.append({**row, "triage_s": _seconds(packet, claim, "ana")})
        theirs = dict(row)
        if i in differ_unclear:
            theirs.update({"class": "unclear", "note": "cannot tell what it means"})
        if i in differ_fix:
            theirs["fields"] = {**row["fields"], "safe_fix": False}
        ben.append({**theirs, "triage_s": _seconds(packet, claim, "ben")})
        if i in differ_unclear | differ_fix:
            reason = ("a broad remark names no defect" if i in differ_unclear
                      else "the fix it proposes is the one the project applied")  # fmt: skip
            ada.append({**row, "triage_s": 20.0, "reason": reason})
    for name, rows in (("ana", ana), ("ben", ben), ("ada", ada)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_labels(rundir, folder / "ana.jsonl", rater="ana")
    import_labels(rundir, folder / "ben.jsonl", rater="ben")
    if ada:
        import_labels(rundir, folder / "ada.jsonl", adjudicator="ada")

    script = folder / "judge.py"
    script.write_text(JUDGE_SCRIPT.format(specific=SPECIFIC, tol=TOLERANCE, fields=_FIELDS), encoding="utf-8")
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-I", "-S", str(script.resolve())))
    (folder / "judge.toml").write_text(
        "# The demo's deterministic command judge (the raters' rule); calibrated like any judge.\n"
        # Sandboxed like any judge: its own script's folder is all it needs to see.
        f"name = \"demo-judge\"\naudit_seed = 7\njudge = {{ kind = \"command\", command = {json.dumps(command)}, "
        f"expose = {json.dumps([str(script.resolve().parent)])} }}\n"
        "# The demo's reviewers write no duplicate and no long false claim, so its labelled claims\n"
        "# lack two of the kinds calibration asks for: waived here, and recorded as waived.\n"
        "[rule]\nmin_per_kind = 0\n",
        encoding="utf-8",
    )  # fmt: skip
    judge = load_judge(folder / "judge.toml")
    with LabelStore(rundir) as store:
        report = agreement(store, resamples=1000, seed=7).as_dict()
        calibration = calibrate(store, judge, resamples=1000, seed=7)
    (folder / "agreement.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (folder / "calibration.json").write_text(json.dumps(calibration, indent=2) + "\n", encoding="utf-8")
    rate, triage = label_metrics(rundir)
    return LabelDemo(folder=folder, claims=len(pairs), disputed=len(ada), agreement=report, calibration=calibration,
                     verdicts=len(label_verdicts(rundir)), actionability=rate.as_dict(),
                     triage_minutes=triage.as_dict())  # fmt: skip
