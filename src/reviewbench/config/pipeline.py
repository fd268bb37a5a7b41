"""Typed, frozen configurations of mining and validation, and `reviewbench.toml`."""

from __future__ import annotations

import os
import re
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError
from ..records import SelectionSignal

__all__ = [
    "DEFAULT_FIX_PATTERN",
    "DEFAULT_SELECT",
    "DEFAULT_TEST_PATTERNS",
    "MineConfig",
    "MutationOperator",
    "Network",
    "ValidateConfig",
    "load_repo_settings",
    "resolve_test_settings",
]

#: Conventional fix words, whole words only: "prefix" or "fixture" must not match.
DEFAULT_FIX_PATTERN = r"\b(?:fix|fixes|fixed|bugfix|hotfix)\b"

#: Candidate signals used when ``--select`` is not given, chosen by measurement on real
#: histories against curated bug datasets (docs/MINING.md): the message alone found 58 of
#: 81 known fixes, the message or a source edit with its test edit 72 of 81.
DEFAULT_SELECT: tuple[SelectionSignal, ...] = (SelectionSignal.MESSAGE, SelectionSignal.TEST_COEDIT)

#: What counts as a test file when ``--test-pattern`` is not given. Patterns without a
#: slash match the file name; ``**/`` matches any number of directories.
DEFAULT_TEST_PATTERNS: tuple[str, ...] = (
    # Python
    "test_*.py",
    "*_test.py",
    "tests.py",  # a Django app's, and the single test module of many 2010s libraries
    "conftest.py",
    "**/tests/**",
    "**/test/**",
    "**/testing/**",
    # JavaScript / TypeScript
    "*.test.js",
    "*.test.jsx",
    "*.test.ts",
    "*.test.tsx",
    "*.test.mjs",
    "*.test.cjs",
    "*.test.mts",
    "*.test.cts",
    "*.spec.js",
    "*.spec.jsx",
    "*.spec.ts",
    "*.spec.tsx",
    "*.spec.mjs",
    "*.spec.cjs",
    "*.test-d.ts",  # tsd's and vitest's type tests
    "**/__tests__/**",
    # a package's one test file at its root (sindresorhus' `test.js` beside `index.js`):
    # anchored, so that a module named `test` deeper down stays source
    "/test.js",
    "/test.mjs",
    "/test.cjs",
    "/test.ts",
    "/test.mts",
    "/test.cts",
    "/tests.js",
    "/tests.ts",
    # Go
    "*_test.go",
    "**/testdata/**",
    # Java / Kotlin
    "**/src/test/**",
    "*Test.java",
    "*Tests.java",
    "*Test.kt",
    # Rust
    "**/benches/**",
)


def _message(exc: ValidationError) -> str:
    """Pydantic's first error, without its "Value error, " prefix."""
    message = exc.errors()[0]["msg"]
    return message.removeprefix("Value error, ")


#: Controls per defect case when none is asked for ("roughly a 2:1 ratio of mutated
#: to clean files"; issue 13: controls are mandatory, fix reversals included).
DEFAULT_CONTROLS_RATIO = 0.5


class MutationOperator(StrEnum):
    """The mutation operators (``mine/mutations/`` for Python, ``mine/script_mutations/`` for
    JavaScript and TypeScript, one module each; a test keeps the three in step)."""

    BOUNDARY_FLIP = "boundary_flip"
    BROADEN_EXCEPT = "broaden_except"
    CLEANUP_REMOVAL = "cleanup_removal"
    DROP_AWAIT = "drop_await"
    DROP_RETURN = "drop_return"
    GUARD_DELETION = "guard_deletion"
    LOOSE_EQUALITY = "loose_equality"
    NEGATE_CONDITION = "negate_condition"
    OFF_BY_ONE = "off_by_one"
    OPERATOR_SWAP = "operator_swap"
    STATEMENT_SWAP = "statement_swap"
    WRONG_ARGUMENT = "wrong_argument"


class MineConfig(BaseModel):
    """How to turn a repository into cases: fix reversals from history, and mutations,
    controls and rename variants made at HEAD."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: Path = Field(description="Repository to mine.")
    grep: tuple[str, ...] = Field(
        default=(DEFAULT_FIX_PATTERN,),
        description="Python regexes matched case-insensitively against the commit message.",
    )
    select: tuple[SelectionSignal, ...] = Field(
        default=DEFAULT_SELECT,
        description="Candidate signals: a commit is a candidate fix when it matches any of them "
        "(message: a --grep pattern; issue_ref; test_coedit; convention).",
    )
    since: str | None = Field(default=None, description="Only commits after this date.")
    until: str | None = Field(default=None, description="Only commits before this date.")
    max_lines: int = Field(default=60, ge=1, description="Max changed source lines per case.")
    limit: int | None = Field(default=None, ge=1, description="Keep the newest N cases.")
    include: tuple[str, ...] = Field(
        default=(), description="If given, only matching paths count as source."
    )
    exclude: tuple[str, ...] = Field(default=(), description="Paths never counted as source.")
    test_patterns: tuple[str, ...] = Field(
        default=DEFAULT_TEST_PATTERNS, description="Globs of test files (kept in the base tree)."
    )
    seed: int = Field(default=0, description="Seed of case ids, titles and every random choice.")
    fixes: bool = Field(default=True, description="Mine fix reversals from history (--no-fixes: off).")
    mutations: int = Field(default=0, ge=0, description="Number of mutation cases to make at HEAD.")
    controls_ratio: float | None = Field(
        default=None,
        ge=0,
        description="Control cases per defect case (0.5 = 2 defect : 1 control). None: 0.5, for fix "
        "reversals too (controls are mandatory); 0 opts out.",
    )
    operators: tuple[str, ...] = Field(default=(), description="Mutation operators to use; empty: all.")
    paths: tuple[str, ...] = Field(default=(), description="Globs of the files mutations may change.")
    rename: bool = Field(default=False, description="Add a rename variant of every defect case.")
    noisy: int = Field(
        default=0, ge=0, description="Noisy cases: N mutations buried among refactors of other files, and N "
        "diffs of refactors only.",
    )
    natural: bool = Field(
        default=False, description="Trace each fix to the commits that introduced its lines (SZZ): natural cases."
    )
    coverage_cmd: str | None = Field(
        default=None, description="Shell command running the tests under coverage.py, run once at HEAD."
    )
    mirrors: bool = Field(
        default=True, description="Add the mirror of every fix reversal and mutation: the same change the "
        "other way, a clean case paired with it (--no-mirrors: off).",
    )

    @property
    def effective_controls_ratio(self) -> float:
        """Controls per defect case actually used: 2 defect cases to 1 control unless told."""
        return DEFAULT_CONTROLS_RATIO if self.controls_ratio is None else self.controls_ratio

    @property
    def synthetic(self) -> bool:
        """Whether anything beyond fix reversals is asked for."""
        return bool(self.mutations or self.rename or self.effective_controls_ratio or self.noisy)

    @field_validator("operators")
    @classmethod
    def _known_operators(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        known = [op.value for op in MutationOperator]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown mutation operator {unknown[0]!r} (known: {', '.join(known)})")
        return tuple(dict.fromkeys(names))

    @model_validator(mode="after")
    def _something_to_mine(self) -> MineConfig:
        if not self.fixes and not self.mutations and not self.noisy:
            raise ValueError("--no-fixes leaves nothing to mine: add --mutations N")
        if self.natural and not self.fixes:
            raise ValueError("--natural traces mined fixes: it cannot go with --no-fixes")
        return self

    @field_validator("select")
    @classmethod
    def _some_signal(cls, signals: tuple[SelectionSignal, ...]) -> tuple[SelectionSignal, ...]:
        if not signals:
            raise ValueError("--select needs at least one signal")
        return tuple(dict.fromkeys(signals))

    @field_validator("grep")
    @classmethod
    def _compilable(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        if not patterns:
            raise ValueError("at least one --grep pattern is needed")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"--grep {pattern!r} is not a valid regex: {exc}") from None
        return patterns

    def message_regex(self) -> re.Pattern[str]:
        """One compiled regex matching any of the fix patterns."""
        return re.compile("|".join(f"(?:{p})" for p in self.grep), re.IGNORECASE)

    @classmethod
    def build(cls, **values: object) -> MineConfig:
        """Validate values from the CLI, raising :class:`UsageError` on bad input."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise UsageError(f"invalid mining option: {_message(exc)}") from None


class Network(StrEnum):
    """Whether test code may reach the network."""

    DENY = "deny"
    ALLOW = "allow"


class ValidateConfig(BaseModel):
    """How to prove cases with the repository's tests (SPEC section 4)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    test_cmd: str | None = Field(default=None, description="Shell command running the tests.")
    setup_cmd: str | None = Field(
        default=None, description="Run once per scratch tree before tests (network allowed)."
    )
    jobs: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=1)
    timeout: float = Field(default=600.0, gt=0, description="Seconds per test run.")
    network: Network = Network.DENY
    reruns: int = Field(default=2, ge=1, description="A failure must reproduce this many times.")
    env: tuple[str, ...] = Field(default=(), description="Variables passed to tests although they look "
                                 "secret (*_KEY, *TOKEN, *_SECRET, *PASSWORD*, *_PAT, *_DSN…, or a URL with a password); "
                                 "all others of that kind are dropped. "
                                 "NAME=VALUE sets the variable in every test run (e.g. LC_ALL=C: the locale).")  # fmt: skip
    memory_mb: int | None = Field(default=4096, ge=64, description="Address-space limit per run.")
    max_file_mb: int | None = Field(default=1024, ge=1, description="Largest file a test run may write, "
                                    "its case log included (MiB): past it the run is stopped (SIGXFSZ).")  # fmt: skip
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    force: bool = Field(default=False, description="Re-validate cases already validated.")
    setup: str | None = Field(
        default=None,
        description="Build one isolated test environment per corpus with this command run "
        "inside a fresh virtual environment ('auto': the project editable with its test "
        "extras or test requirements, and pytest).",
    )
    keep_going: bool = Field(
        default=False, description="Do not stop when the first bases all fail the same way."
    )
    cases: tuple[str, ...] = Field(
        default=(), description="Validate only these cases, again if they have a status."
    )
    python: str | None = Field(
        default=None,
        description="The interpreter tests run under (a path, or a name on PATH such as python3.7): "
        "the base of the --setup environment, else of the default test command [default: the "
        "active environment].",
    )

    @field_validator("env")
    @classmethod
    def _env_entries(cls, entries: tuple[str, ...]) -> tuple[str, ...]:
        for entry in entries:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?", entry, re.DOTALL):
                raise ValueError(f"{entry!r} is neither a variable name nor NAME=VALUE")
        return entries

    @property
    def env_allow(self) -> tuple[str, ...]:
        """Names of ``env`` passed through although they look secret."""
        return tuple(e.split("=", 1)[0] for e in self.env)

    @property
    def env_set(self) -> dict[str, str]:
        """The ``NAME=VALUE`` entries of ``env``: set in every test run."""
        return dict(e.split("=", 1) for e in self.env if "=" in e)

    @classmethod
    def build(cls, **values: Any) -> ValidateConfig:
        try:
            return cls(**values)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            raise UsageError(f"invalid validation setting {where}: {_message(exc)}") from None


SETTINGS_FILE = "reviewbench.toml"


def load_repo_settings(repo: Path, section: str) -> dict[str, Any]:
    """The ``[section]`` table of ``reviewbench.toml`` at the repository root, or {}.

    Raises:
        UsageError: the file exists but is not valid TOML or the section is not a table.
    """
    path = repo / SETTINGS_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    table = data.get(section, {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [{section}] must be a table")
    return table


def resolve_test_settings(repo: Path, overrides: dict[str, Any]) -> ValidateConfig:
    """How to run the repository's tests: defaults, then ``[validate]`` of its
    reviewbench.toml, then ``overrides`` (CLI options; None means not given).

    Raises:
        UsageError: a malformed settings file or a bad value.
    """
    values = {k.replace("-", "_"): v for k, v in load_repo_settings(repo, "validate").items()}
    unknown = sorted(set(values) - set(ValidateConfig.model_fields))
    if unknown:  # the file's mistake, named as the experiment file's are
        from .experiment import unknown_key

        raise UsageError(f"{repo / SETTINGS_FILE}: [validate]: {unknown_key(unknown[0], ValidateConfig.model_fields)}")
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ValidateConfig.build(**values)

