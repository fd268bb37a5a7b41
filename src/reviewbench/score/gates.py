"""Gates: turning scores into a bounded decision, fixed before the results are seen.

A gates file (TOML, ``default_gates.toml`` unless ``--gates``) lists tiers of authority
tried in order (the first whose every condition holds is granted), vetoes that override
them, and the evidence a verdict needs. The decision always lists what is *not*
permitted: the granted tier's own exclusions, every use that only a higher tier would
permit, and the uses never permitted at all.
"""

from __future__ import annotations

import hashlib
import operator
import tomllib
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UsageError

__all__ = ["Gates", "decide", "load_gates"]

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


class _Model(BaseModel):
    # TOML has nan and inf; a threshold of nan makes every comparison false, silently.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Condition(_Model):
    metric: str
    op: Literal[">", ">=", "<", "<="]
    value: float


class Tier(_Model):
    name: str
    authority: str = ""
    when: list[Condition] = Field(default_factory=list)
    permitted: list[str] = Field(default_factory=list)
    not_permitted: list[str] = Field(default_factory=list)


class Gates(_Model):
    min_defect_cases: int = Field(default=10, ge=0)
    max_interval_width: float = Field(default=0.5, gt=0)
    never_permitted: list[str] = Field(default_factory=list)
    veto: list[Tier] = Field(default_factory=list)
    tier: list[Tier] = Field(default_factory=list)
    fallback: Tier


def load_gates(path: Path | None) -> tuple[Gates, str, str]:
    """The gates, their source text and its SHA-256 (the built-in table when ``path`` is None).

    Raises:
        UsageError: the file is missing, not TOML, or not a gates table (field named).
    """
    if path is None:
        text = resources.files("reviewbench.score").joinpath("default_gates.toml").read_text("utf-8")
        where = "built-in gates"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"gates file {path} cannot be read: {exc}") from None
        where = str(path)
    try:
        gates = Gates.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{where}: {field}: {first['msg']}") from None
    return gates, text, hashlib.sha256(text.encode()).hexdigest()


def _check(condition: Condition, metrics: dict[str, dict]) -> dict:
    observed = metrics.get(condition.metric, {}).get("value")
    passed = observed is not None and _OPS[condition.op](observed, condition.value)
    return {"metric": condition.metric, "op": condition.op, "threshold": condition.value,
            "observed": observed, "passed": passed}  # fmt: skip


def decide(gates: Gates, metrics: dict[str, dict], valid_defect_cases: int) -> dict:
    """The decision for one condition's metrics (the JSON contract's ``decision``)."""
    used = {c.metric for t in (*gates.veto, *gates.tier) for c in t.when}
    checks = {t.name: [_check(c, metrics) for c in t.when] for t in (*gates.veto, *gates.tier)}
    all_permitted = [p for t in (*gates.tier, gates.fallback) for p in t.permitted]

    def verdict(tier: Tier, reason: str | None = None) -> dict:
        higher: list[str] = []
        for t in gates.tier:
            if t.name == tier.name:
                break
            higher.extend(t.permitted)
        not_permitted = [*tier.not_permitted, *higher, *gates.never_permitted]
        if tier.name not in {t.name for t in gates.tier}:  # a veto or the fallback
            not_permitted += [p for p in all_permitted if p not in tier.permitted]
        return {
            "authority": tier.authority or tier.name,
            "tier": tier.name,
            "permitted": list(tier.permitted),
            "not_permitted": list(dict.fromkeys(not_permitted)),
            "gates": checks,
            "reason": reason,
        }

    insufficient = None
    if valid_defect_cases < gates.min_defect_cases:
        insufficient = f"{valid_defect_cases} valid defect cases (< {gates.min_defect_cases})"
    else:
        for name in sorted(used):
            m = metrics.get(name, {})
            lo, hi = m.get("lo"), m.get("hi")
            if m.get("value") is None:
                insufficient = f"{name} could not be measured (denominator 0)"
                break
            if lo is not None and hi is not None and hi - lo > gates.max_interval_width:
                insufficient = (f"{name} interval [{lo:.2f}, {hi:.2f}] is wider than "
                                f"{gates.max_interval_width:g}")  # fmt: skip
                break
    if insufficient:
        result = verdict(gates.fallback, insufficient)
        result["authority"] = "insufficient evidence"
        return result
    for veto in gates.veto:
        if checks[veto.name] and all(c["passed"] for c in checks[veto.name]):
            return verdict(veto, f"veto {veto.name}")
    for tier in gates.tier:
        if all(c["passed"] for c in checks[tier.name]):
            return verdict(tier)
    return verdict(gates.fallback)
