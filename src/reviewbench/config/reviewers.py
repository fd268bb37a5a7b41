"""Typed configurations of the reviewer kinds, as written in an experiment file.

One class per kind, told apart by ``kind``. Secrets never appear here: a config names the
environment variable that holds a key, never the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal, get_args
from urllib.parse import SplitResult, parse_qsl, urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
    model_validator,
)

__all__ = [
    "CALIBRATION_KINDS",
    "AdapterConfig",
    "AnthropicConfig",
    "Capabilities",
    "CommandConfig",
    "FlagAllConfig",
    "GiteaConfig",
    "GithubConfig",
    "OpenAIConfig",
    "ProbeConfig",
    "ReviewerConfig",
    "SarifConfig",
    "SilentConfig",
    "capabilities_of",
    "kind_of",
    "kinds_of",
    "network_policy",
    "parse_host_port",
]


#: Findings a review run keeps at most, unless its reviewer table says ``max_findings``.
DEFAULT_MAX_FINDINGS = 200

#: Header and query names that carry credentials (``Authorization``, Azure's ``api-key``,
#: ``x-goog-api-key``, ``?key=``, ``X-Auth-Token``, cookies, signed URLs' ``sig``).
_CREDENTIAL_NAME = re.compile(r"auth|key|token|secret|passw|cookie|session|credential|^sig$|signature", re.I)
_HEADERS = ("Extra HTTP headers, recorded with the experiment (run store, report): none may carry a "
            "credential; name its variable in header_env.")  # fmt: skip
_HEADER_ENV = ("Headers read from environment variables at each request, never recorded: "
               '{ "api-key" = "AZURE_OPENAI_API_KEY" }.')  # fmt: skip


def _plain_headers(headers: dict[str, str]) -> dict[str, str]:
    """Refuse a literal credential: the experiment is recorded whole in the run store."""
    for name in headers:
        if _CREDENTIAL_NAME.search(name):
            raise ValueError(f"header {name!r} would write a credential into the experiment, which the run store "
                             f'and report record: export it and name the variable, header_env = {{ "{name}" = '
                             '"VARIABLE" }')  # fmt: skip
    return headers


def _split(url: str) -> SplitResult | None:
    """``url`` in parts; None when it is not a URL at all (the kind's own checks say so)."""
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _public_url(url: str) -> str:
    """Refuse a URL holding a credential (``https://user:key@host``, ``?key=…``): it is recorded."""
    parts = _split(url)
    if parts is None:
        return url
    named = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    if "@" in parts.netloc or any(_CREDENTIAL_NAME.search(name) for name in named):
        raise ValueError("base_url carries a credential (a user name, password or key), which the run store and "
                         "report would record: put the key in the variable api_key_env or header_env names")  # fmt: skip
    return url


def _push_url(url: str) -> str:
    """Refuse a push URL holding a credential: a password, or any user name over HTTP(S)
    (a token passes as one); ``ssh://git@host/…`` and ``git@host:…`` name a login only."""
    parts = _split(url)
    if parts is None:
        return url
    user, at, _ = parts.netloc.rpartition("@")
    if at and (":" in user or parts.scheme.lower() in ("http", "https")):
        raise ValueError("remote carries a credential, which the run store and report would record: let git's "
                         "credential helper or ssh supply it")  # fmt: skip
    return url


PlainHeaders = Annotated[dict[str, str], AfterValidator(_plain_headers)]
PublicURL = Annotated[str, AfterValidator(_public_url)]
PushURL = Annotated[str, AfterValidator(_push_url)]


@dataclass(frozen=True)
class Capabilities:
    """What a reviewer kind needs and does, declared once on its config model.

    The layers above ask these instead of comparing kind names: the experiment's checks
    (``config/experiment.py``), the runner's guidance and tree handling (``review/``), the
    engine's pull-request bookkeeping and the score's calibration tiers. The adapter of the
    kind (``reviewers/<kind>.py``) registers against the model, and the shared kind test
    checks that the adapter does what is declared here.
    """

    needs_tree: bool = False
    """It reads the exported post-patch tree: a condition must set ``context = "tree"``."""
    opens_pull_requests: bool = False
    """Each run opens a pull request on a forge (guidance is committed, not prompted; the
    engine records the pull request whatever the run's end)."""
    calibration: bool = False
    """A calibration baseline: it brackets the metrics and never earns a tier."""
    chat: bool = False
    """A chat endpoint whose adapter offers ``complete(system, user)``: it can also solve
    fix tasks and judge claims."""


class AdapterConfig(BaseModel):
    """What every kind's table shares: frozen, no unknown keys, its declared capabilities."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capabilities: ClassVar[Capabilities] = Capabilities()

    max_findings: int = Field(default=DEFAULT_MAX_FINDINGS, ge=1, le=1_000_000,
                              description="Findings a review may hold (default 200); one more and the run is "
                                          "invalid, none of its findings kept (a solver or judge ignores it).")  # fmt: skip


class OpenAIConfig(AdapterConfig):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp…)."""

    capabilities: ClassVar[Capabilities] = Capabilities(chat=True)

    kind: Literal["openai"]
    base_url: PublicURL = Field(default="https://api.openai.com/v1", description="Up to and including /v1.")
    model: str
    api_key_env: str | None = Field(default="OPENAI_API_KEY", description="Variable holding the key.")
    temperature: float | None = 0.0
    top_p: float | None = None
    seed: int | None = None
    max_tokens: int | None = 1024
    headers: PlainHeaders = Field(default_factory=dict, description=_HEADERS)
    header_env: dict[str, str] = Field(default_factory=dict, description=_HEADER_ENV)


class AnthropicConfig(AdapterConfig):
    """The Anthropic messages API."""

    capabilities: ClassVar[Capabilities] = Capabilities(chat=True)

    kind: Literal["anthropic"]
    base_url: PublicURL = "https://api.anthropic.com"
    model: str
    api_key_env: str | None = "ANTHROPIC_API_KEY"
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int = 1024
    anthropic_version: str = "2023-06-01"
    headers: PlainHeaders = Field(default_factory=dict, description=_HEADERS)
    header_env: dict[str, str] = Field(default_factory=dict, description=_HEADER_ENV)


class _Sandboxed(AdapterConfig):
    """What a command may see and use (see docs/SANDBOX.md)."""

    env: list[str] = Field(default_factory=list,
                           description="Variables passed to the command; nothing else of the caller's environment is.")  # fmt: skip
    network: StrictBool | list[str] = Field(
        default=False, description="No network (false, the default; [] alike); a list of 'host:port' pairs it may "
        "connect to, through the sandbox's filtering proxy (HTTP CONNECT and plain HTTP); or true, unrestricted "
        "(an explicit opt-out the registration and every run record).")  # fmt: skip
    sandbox: bool = Field(default=True, description="Hide the corpus, gold, run directory and homes (refused "
                                                    "if the machine cannot); false shows the caller's files.")  # fmt: skip
    expose: list[str] = Field(default_factory=list,
                              description="Absolute paths shown read-only inside the sandbox (e.g. the agent's install).")  # fmt: skip
    hide: list[str] = Field(default_factory=list,
                            description="Absolute paths hidden besides the defaults (other checkouts, other corpora).")  # fmt: skip
    max_output_bytes: int = Field(default=1 << 20, ge=1, le=1 << 30,
                                  description="Stdout read at most (default 1 MiB); one byte more and the command "
                                              "is killed, its run invalid.")  # fmt: skip

    @field_validator("network")
    @classmethod
    def _hosts(cls, network: bool | list[str]) -> bool | list[str]:
        if isinstance(network, list):
            for entry in network:
                parse_host_port(entry)  # ValueError: one line naming the entry
        return network

    @model_validator(mode="after")
    def _enforceable(self) -> _Sandboxed:
        if not self.sandbox and self.network is not True:
            raise ValueError("sandbox = false cannot restrict the network: add network = true (unrestricted, "
                             "recorded as such), or keep the sandbox")  # fmt: skip
        return self


class CommandConfig(_Sandboxed):
    """Any executable: the packet as JSON on stdin, the review text on stdout."""

    kind: Literal["command"]
    command: str = Field(description="Shell command line, e.g. 'path/to/script --flag'.")


class SarifConfig(_Sandboxed):
    """A static analyser producing SARIF, run inside the exported post-patch tree."""

    capabilities: ClassVar[Capabilities] = Capabilities(needs_tree=True)

    kind: Literal["sarif"]
    command: str = Field(description="e.g. 'ruff check --output-format sarif .'")
    max_output_bytes: int = Field(default=16 << 20, ge=1, le=1 << 30,
                                  description="Stdout read at most (default 16 MiB: SARIF carries rule metadata); "
                                              "one byte more and the analyser is killed, its run invalid.")  # fmt: skip


def parse_host_port(entry: str) -> tuple[str, int]:
    """``"api.example.com:443"`` (or ``"[::1]:8080"``) as (lower-case host, port).

    Raises:
        ValueError: not a host and a port from 1 to 65535 (a scheme, a path or a wildcard).
    """
    host, sep, port = entry.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not re.fullmatch(r"[A-Za-z0-9_.:-]+", host):
        raise ValueError(f"network entry {entry!r} is not 'host:port' (e.g. 'api.example.com:443': no scheme, "
                         "path or wildcard)")  # fmt: skip
    return host.lower().rstrip("."), int(port)


def network_policy(config: object) -> dict[str, object] | None:
    """What a command kind's table allows of the network, as recorded: ``{"policy": "none"}``,
    ``{"policy": "allowlist", "hosts": [...]}`` or ``{"policy": "unrestricted"}``; None for
    kinds that run no command (reviewbench's own HTTP clients)."""
    if not isinstance(config, _Sandboxed):
        return None
    if config.network is True:
        return {"policy": "unrestricted"}
    if not config.network:
        return {"policy": "none"}
    return {"policy": "allowlist", "hosts": sorted({f"{h}:{p}" if ":" not in h else f"[{h}]:{p}"
                                                     for h, p in map(parse_host_port, config.network)})}


#: Bot messages that say no review was done (usage limits, errors, refusals).
DEFAULT_FAILURE_PATTERNS = (
    r"usage limit", r"rate limit", r"quota", r"(could|can)(not|n't| not) (review|complete|process)",
    r"unable to (review|complete|process)", r"(an )?error (occurred|has occurred)", r"something went wrong",
    r"(review|request) failed", r"try again later",
)


class _ForgeConfig(AdapterConfig):
    """A review bot on a forge: each run opens a pull request on a sandbox repository."""

    capabilities: ClassVar[Capabilities] = Capabilities(needs_tree=True, opens_pull_requests=True)

    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", description="The sandbox repository, 'owner/name'.")
    remote: PushURL = Field(description="A git URL of that repository you can push to (your git credentials are "
                            "used; a URL holding one is refused).")
    token_env: str = Field(default="GITHUB_TOKEN", description="Variable holding the API token (never written anywhere).")
    trigger: str | None = Field(default=None, description="Comment posted to ask for a review, e.g. '@codex review'; "
                                                          "none: the bot reviews new pull requests by itself.")  # fmt: skip
    bot: str = Field(min_length=1, description="Login of the bot whose reviews and comments count.")
    poll_s: float = Field(default=30.0, gt=0, description="Seconds between polls of the pull request.")
    timeout_s: float = Field(default=1800.0, gt=0, description="How long to wait for the bot (then timed_out); "
                                                               "keep it below the condition's timeout_s.")  # fmt: skip
    keep_open: bool = Field(default=False, description="Leave the pull request and branches after the review.")
    completion: Literal["review", "first_activity", "quiet"] = Field(
        default="review", description="When the bot's review is complete: 'review', its first review in state "
        "COMMENTED, CHANGES_REQUESTED or APPROVED (comments before it are read, never taken for the review); "
        "'first_activity', its first review or comment; 'quiet', quiet_polls polls with nothing new after its "
        "first activity (bots that answer in several comments).")  # fmt: skip
    quiet_polls: int = Field(default=3, ge=1, le=1000, description="completion = 'quiet': polls without new bot "
                                                                    "activity that end the review.")  # fmt: skip
    failure_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_FAILURE_PATTERNS),
        description="Regular expressions (case-insensitive): a bot message matching one that names no changed "
        "file is a failed review (failure_code bot_error), never a clean one.")  # fmt: skip

    @field_validator("failure_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"failure pattern {pattern!r} is not a regular expression: {exc}") from None
        return patterns


class GithubConfig(_ForgeConfig):
    """A review bot on GitHub (``@codex review``, automatic review apps)."""

    kind: Literal["github"]
    api_url: str = Field(default="https://api.github.com", description="REST API root (GitHub Enterprise: …/api/v3).")


class GiteaConfig(_ForgeConfig):
    """A review bot on Gitea or Forgejo, through their GitHub-like REST API."""

    kind: Literal["gitea"]
    api_url: str = Field(description="REST API root, e.g. 'https://forge.example.org/api/v1'.")


class SilentConfig(AdapterConfig):
    """Calibration baseline: always NO_ISSUES."""

    capabilities: ClassVar[Capabilities] = Capabilities(calibration=True)

    kind: Literal["silent"]


class FlagAllConfig(AdapterConfig):
    """Calibration baseline: one high finding on every changed hunk."""

    capabilities: ClassVar[Capabilities] = Capabilities(calibration=True)

    kind: Literal["flag_all"]


class ProbeConfig(AdapterConfig):
    """Calibration baseline: style or naming remarks that never describe a defect (docs/REVIEW.md).

    A probe tests the benchmark, not a reviewer: what its remarks are credited with is what
    automatic matching gives for naming a symbol rather than identifying a defect.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(calibration=True)

    kind: Literal["probe"]
    probe: Literal["namer", "quoter", "shape"] = Field(
        description="namer: '`<enclosing symbol>` would read better with a docstring and type hints' at the "
                    "first changed line of each hunk; quoter: '`<changed identifier>` is a vague name' there; "
                    "shape: the namer, only on diffs of two or more hunks or more removed than added lines "
                    "(or, with feature, on diffs whose feature is at least at_least / at most at_most).")  # fmt: skip
    feature: Literal["changed", "added", "removed", "files", "hunks"] | None = Field(
        default=None, description="shape only: the shape feature that decides (audit passes the corpus's most "
                                  "separating one).")  # fmt: skip
    at_least: float | None = Field(default=None, description="shape with feature: comment when it is >= this.")
    at_most: float | None = Field(default=None, description="shape with feature: comment when it is <= this.")

    @model_validator(mode="after")
    def _rule(self) -> ProbeConfig:
        bounds = (self.at_least is not None) + (self.at_most is not None)
        if self.feature is not None and (self.probe != "shape" or bounds != 1):
            raise ValueError("feature is for probe = \"shape\", with exactly one of at_least or at_most")
        if self.feature is None and bounds:
            raise ValueError("at_least / at_most need a feature")
        return self


ReviewerConfig = Annotated[
    OpenAIConfig | AnthropicConfig | CommandConfig | SarifConfig | SilentConfig | FlagAllConfig | ProbeConfig
    | GithubConfig | GiteaConfig,
    Field(discriminator="kind"),
]
"""Every reviewer kind's table, told apart by ``kind`` (a new kind adds its model here)."""


def kind_of(model: type[AdapterConfig]) -> str:
    """The ``kind`` a config model is written with in TOML (its one literal)."""
    (kind,) = get_args(model.model_fields["kind"].annotation)
    return str(kind)


def kinds_of(union: object) -> dict[str, type[AdapterConfig]]:
    """Kind -> config model of a discriminated union (``ReviewerConfig``, a solver's), in its order."""
    members = get_args(get_args(union)[0])  # Annotated[A | B, Field(...)] -> (A, B)
    return {kind_of(model): model for model in members}


def capabilities_of(kind: str) -> Capabilities:
    """The declared capabilities of a reviewer kind by name (nothing for a kind not known)."""
    model = kinds_of(ReviewerConfig).get(kind)
    return model.capabilities if model is not None else Capabilities()


#: Kinds that calibrate the metrics rather than review: they never earn a tier (``score``).
CALIBRATION_KINDS = frozenset(kind for kind, model in kinds_of(ReviewerConfig).items() if model.capabilities.calibration)
