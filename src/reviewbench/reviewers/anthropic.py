"""The Anthropic messages API: one ``POST {base_url}/v1/messages`` per review.

Same words as the OpenAI kind (``_messages``), same error mapping (``_http``; 529
"overloaded" is transient like any 5xx). The review text is the concatenation of the
answer's ``text`` content blocks; other block types (thinking, tool use) are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config.reviewers import AnthropicConfig
from ..records import ReviewPacket
from ._http import (
    ClientPool,
    credentials,
    error_in_body,
    fail_malformed,
    post_json,
    request_headers,
    usage_int,
)
from .base import EndpointRequest, KindExamples, ReviewReply, register
from .messages import system_text, user_text
from .preflight import endpoint_preflight

__all__ = ["AnthropicReviewer", "examples", "models_request"]

KIND = "anthropic"


def models_request(config: AnthropicConfig) -> EndpointRequest:
    """The endpoint check: ``GET {base_url}/v1/models`` (no tokens spent), the key as ``x-api-key``."""
    sent = credentials(config, KIND, "x-api-key")
    fixed = {"anthropic-version": config.anthropic_version, **sent.headers}
    return EndpointRequest(config.base_url.rstrip("/") + "/v1/models", fixed, sent.secrets)


@register(AnthropicConfig, preflight=endpoint_preflight, endpoint=models_request)
class AnthropicReviewer:
    """Reviews a packet with one message: system = prompt (+ guidance), user = change."""

    def __init__(self, config: AnthropicConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/v1/messages"
        self._pool = ClientPool()

    def request_body(self, packet: ReviewPacket) -> dict[str, Any]:
        """The JSON body sent for ``packet``; sampling parameters only when set."""
        return self.messages_body(system_text(packet), user_text(packet))

    def messages_body(self, system: str, user: str) -> dict[str, Any]:
        """The JSON body of one exchange: ``system`` then ``user``; sampling parameters when set."""
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model,
            "max_tokens": cfg.max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        }
        for name in ("temperature", "top_p"):
            value = getattr(cfg, name)
            if value is not None:
                body[name] = value
        return body

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        return await self._send(self.request_body(packet))

    async def complete(self, system: str, user: str) -> ReviewReply:
        """One exchange with free-form words (fix-task solvers); same wire and errors as reviews."""
        return await self._send(self.messages_body(system, user))

    async def _send(self, body: dict[str, Any]) -> ReviewReply:
        sent = credentials(self.config, KIND, "x-api-key")
        secrets = sent.secrets
        fixed = {"anthropic-version": self.config.anthropic_version, **sent.headers}
        headers = request_headers(KIND, self.config.headers, fixed)
        data = await post_json(
            self._pool,
            self.url,
            body=body,
            headers=headers,
            kind=KIND,
            secrets=secrets,
        )
        return self._reply(data, secrets)

    def _reply(self, data: dict[str, Any], secrets: tuple[str, ...]) -> ReviewReply:
        if data.get("type") == "error" or ("error" in data and "content" not in data):
            raise error_in_body(KIND, self.url, data, secrets) or fail_malformed(
                KIND, self.url, "content", data, secrets
            )
        content = data.get("content")
        if not isinstance(content, list):
            raise fail_malformed(KIND, self.url, "content", data, secrets)
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
        model = data.get("model")
        usage = data.get("usage")
        return ReviewReply(
            text="".join(texts),
            model=model if isinstance(model, str) else None,
            tokens_in=usage_int(usage, "input_tokens"),
            tokens_out=usage_int(usage, "output_tokens"),
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def examples() -> KindExamples:
    return KindExamples(
        tables=[({"kind": KIND, "model": "m", "api_key_env": "RB_EXAMPLE_KEY"}, "diff"),
                ({"kind": KIND, "base_url": "http://127.0.0.1:8080", "model": "m", "api_key_env": ""}, "tree")],
        refused=[({"kind": KIND, "model": "m", "api_key_env": "RB_EXAMPLE_EMPTY"}, "diff", "RB_EXAMPLE_EMPTY is empty"),
                 ({"kind": KIND, "model": "m", "api_key_env": "", "base_url": "not a url"}, "diff", "base_url")],
        env={"RB_EXAMPLE_KEY": "sk-example", "RB_EXAMPLE_EMPTY": " "},
    )  # fmt: skip
