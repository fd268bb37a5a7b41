"""Loading an experiment file: its configuration (``config/experiment.py``), where
it lives, and a hash of the prompt and guidance texts it points at."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..config.experiment import ConditionConfig, ExperimentConfig, LoadedFile, read_config
from ..config.reviewers import ReviewerConfig, kinds_of

__all__ = ["TEMPLATE", "ConditionConfig", "Experiment", "ExperimentConfig", "load_experiment", "read_config"]


@dataclass(frozen=True)
class Experiment(LoadedFile):
    """A loaded review experiment."""

    config: ExperimentConfig

    @property
    def corpus_path(self) -> Path:
        return (self.base / self.config.corpus).resolve()

    def inputs_sha256(self) -> str:
        """SHA-256 of what each condition's prompt and guidance files say.

        The experiment's own hash covers only the file names it gives; a run directory
        also records this, so that an edited prompt or guidance file is never mixed into
        the runs of its earlier text.
        """
        from .prompt import load_prompt, load_text

        parts = []
        for condition in self.config.condition:
            guidance = (
                load_text((self.base / condition.guidance).resolve(), "guidance") if condition.guidance else None
            )
            part: dict[str, object] = {
                "condition": condition.name, "prompt": load_prompt(condition.prompt, self.base).sha256,
                "guidance": None if guidance is None else hashlib.sha256(guidance.encode()).hexdigest(),
            }
            placed_files: dict[str, str] = {}
            for placed in getattr(condition, "guidance_files", ()):
                text = load_text((self.base / placed.file).resolve(), "guidance")
                placed_files[placed.path] = hashlib.sha256(text.encode()).hexdigest()
            if placed_files:  # only when there are: older hashes stay
                part["guidance_files"] = placed_files
            parts.append(part)
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def load_experiment(path: Path) -> Experiment:
    """Read and check an experiment file.

    Raises:
        UsageError: missing file, TOML syntax error (with line and column), or a field
            with a bad value (named, e.g. ``condition A: reviewer.model``), an unknown key
            (with the key it most likely means).
    """
    config = read_config(path, ExperimentConfig, ", ".join(kinds_of(ReviewerConfig)))
    return Experiment(config=config, path=path.resolve())


TEMPLATE = '''\
# reviewbench experiment: which corpus, which conditions, how many repetitions.
# Run it:   reviewbench run experiment.toml --out runs/first
# Schema:   reviewbench schema experiment

corpus = "corpus"      # corpus directory, relative to this file
repeats = 3            # independent repetitions of every (case, condition)
seed = 7               # seeds the interleaved order of runs
rename = true          # also review rename variants present in the corpus

# A calibration baseline: never finds anything. Keep it: it brackets every metric.
[[condition]]
name = "silent"
reviewer = { kind = "silent" }

# Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter).
# The key is read from the environment variable named by api_key_env, never from here;
# a key sent in a header of its own (Azure's api-key) names its variable in
# header_env = { "api-key" = "AZURE_OPENAI_API_KEY" }.
[[condition]]
name = "A"
reviewer = { kind = "openai", base_url = "http://localhost:11434/v1", model = "qwen2.5-coder:7b", api_key_env = "OLLAMA_KEY", temperature = 0.0, max_tokens = 1024 }
prompt = "default"     # built-in frozen prompt id, or a file
# guidance = "rules/scoped.md"   # optional text given to the reviewer
# guidance_files = [{ path = "AGENTS.md", file = "rules/c-root.md" }]   # or: repository guidance files
context = "diff"       # diff | files | tree
concurrency = 8        # runs in flight at once for this condition
rate_per_minute = 60   # request starts per minute (omit for no limit)
timeout_s = 120        # per attempt
retries = 4            # retries on 429, 5xx and connection errors, with backoff
# stop_after_connection_failures = 5   # stop the condition after this many in a row (0: never)

# Any executable: the packet arrives as JSON on stdin, the review is its stdout (read up to
# max_output_bytes, default 1 MiB: past it the command is killed and the run is invalid). It
# runs sandboxed: no corpus, gold or home in sight; only the variables listed in env. Every
# reviewer table takes max_findings (default 200): a review holding more is invalid too.
# [[condition]]
# name = "agent"
# reviewer = { kind = "command", command = "./my-review-script --strict", env = ["OPENAI_API_KEY"] }
# context = "tree"     # REVIEWBENCH_TREE names an exported post-patch tree (no history)

# A review bot on pull requests of your sandbox repository (docs/FORGE.md).
# [[condition]]
# name = "codex"
# reviewer = { kind = "github", repo = "you/review-sandbox", remote = "git@github.com:you/review-sandbox.git", token_env = "GITHUB_TOKEN", trigger = "@codex review", bot = "chatgpt-codex-connector", poll_s = 30, timeout_s = 1800 }
# context = "tree"
# timeout_s = 2400     # above the reviewer's own timeout_s

# What the decision is registered to rest on, frozen by 'reviewbench register' and printed by
# score and the report. data_controls is required when a condition sends code to a service
# (a chat API or a forge that is not on this machine's loopback).
# [registration]
# owner = "Ana Ruiz"                      # who owns the decision (else every decision line says none)
# hypotheses = [{ id = "H1", statement = "A is fit for triage", gates = ["triage"] }]
# severity_policy = { text = "Severity is the worst credible outcome in production.", levels = { high = "wrong data or money reaches a user", med = "a visible failure with a workaround", low = "cosmetic or internal" } }
# exclusion_policy = "Only runs the harness broke (reviewbench exclude, with the log line)."
# stop_conditions = ["a safety stop", "three outages in a row"]
# completion = "a review in the reviewer's answer within timeout_s"
# product_surface = "model qwen2.5-coder:7b through Ollama, default prompt"
# approvals = [{ role = "security lead", name = "Ben Okafor" }]
# data_controls = { account_type = "team API organisation", workspace = "review-evals", data_settings = "training on inputs off", retention = "30 days at the service; run directory kept 1 year", raw_output_readers = ["Ana Ruiz", "Ben Okafor"] }
'''
