"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, …).

One ``POST {base_url}/chat/completions`` per review, on connections the reviewer keeps
alive (``_http.ClientPool``). The reply keeps the model id the *response* carries, which may
differ from the one requested (routers and free tiers swap models silently).
``usage`` and ``model`` are optional in the answer (several local servers omit them);
``choices[0].message.content`` is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config.reviewers import OpenAIConfig
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

__all__ = ["OpenAIReviewer", "examples", "models_request"]

KIND = "openai"


def models_request(config: OpenAIConfig) -> EndpointRequest:
    """The endpoint check: ``GET {base_url}/models`` (no tokens spent), the key as a bearer token."""
    sent = credentials(config, KIND, "authorization", "Bearer ")
    return EndpointRequest(config.base_url.rstrip("/") + "/models", sent.headers, sent.secrets)


@register(OpenAIConfig, preflight=endpoint_preflight, endpoint=models_request)
class OpenAIReviewer:
    """Reviews a packet with one chat completion: system = prompt (+ guidance), user = change."""

    def __init__(self, config: OpenAIConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self._pool = ClientPool()

    def request_body(self, packet: ReviewPacket) -> dict[str, Any]:
        """The JSON body sent for ``packet``; sampling parameters only when set."""
        return self.messages_body(system_text(packet), user_text(packet))

    def messages_body(self, system: str, user: str) -> dict[str, Any]:
        """The JSON body of one exchange: ``system`` then ``user``; sampling parameters when set."""
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }
        for name in ("temperature", "top_p", "seed", "max_tokens"):
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
        sent = credentials(self.config, KIND, "authorization", "Bearer ")
        secrets = sent.secrets
        headers = request_headers(KIND, self.config.headers, sent.headers)
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
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise error_in_body(KIND, self.url, data, secrets) or fail_malformed(
                KIND, self.url, "choices", data, secrets
            )
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise fail_malformed(KIND, self.url, "choices[0].message", data, secrets)
        text = _content_text(message.get("content"))
        if text is None:
            refusal = message.get("refusal")
            if not isinstance(refusal, str):
                raise fail_malformed(KIND, self.url, "choices[0].message.content", data, secrets)
            text = refusal
        model = data.get("model")
        usage = data.get("usage")
        return ReviewReply(
            text=text,
            model=model if isinstance(model, str) else None,
            tokens_in=usage_int(usage, "prompt_tokens"),
            tokens_out=usage_int(usage, "completion_tokens"),
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _content_text(content: Any) -> str | None:
    """Content as a string, or as a list of parts (some servers) joined; None if neither."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict)]
        texts = [t for t in parts if isinstance(t, str)]
        if texts or not content:
            return "".join(texts)
    return None


def examples() -> KindExamples:
    return KindExamples(
        tables=[({"kind": KIND, "model": "m", "api_key_env": "RB_EXAMPLE_KEY"}, "diff"),
                ({"kind": KIND, "base_url": "http://localhost:11434/v1", "model": "m", "api_key_env": ""}, "files")],
        refused=[({"kind": KIND, "model": "m", "api_key_env": "RB_EXAMPLE_UNSET"}, "diff", "RB_EXAMPLE_UNSET is not set"),
                 ({"kind": KIND, "model": "m", "api_key_env": "", "base_url": "ftp://x/v1"}, "diff", "http:// or https://"),
                 ({"kind": KIND, "model": "m", "api_key_env": "", "headers": {"x": "é"}}, "diff", "printable ASCII")],
        env={"RB_EXAMPLE_KEY": "sk-example"},
    )  # fmt: skip
