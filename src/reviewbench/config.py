"""Typed, frozen configurations for the pipeline stages."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import UsageError

__all__ = ["DEFAULT_FIX_PATTERN", "DEFAULT_TEST_PATTERNS", "MineConfig"]

#: Conventional fix words, whole words only: "prefix" or "fixture" must not match.
DEFAULT_FIX_PATTERN = r"\b(?:fix|fixes|fixed|bugfix|hotfix)\b"

#: What counts as a test file when ``--test-pattern`` is not given. Patterns without a
#: slash match the file name; ``**/`` matches any number of directories.
DEFAULT_TEST_PATTERNS: tuple[str, ...] = (
    # Python
    "test_*.py",
    "*_test.py",
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
    "*.spec.js",
    "*.spec.jsx",
    "*.spec.ts",
    "*.spec.tsx",
    "**/__tests__/**",
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


class MineConfig(BaseModel):
    """How to turn a repository's history into fix-reversal cases."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: Path = Field(description="Repository to mine.")
    grep: tuple[str, ...] = Field(
        default=(DEFAULT_FIX_PATTERN,),
        description="Python regexes matched case-insensitively against the commit message.",
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
    seed: int = Field(default=0, description="Seed of case ids and titles.")

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
        from pydantic import ValidationError

        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UsageError(f"invalid mining option: {first['msg']}") from None
