"""API keys reach the endpoint's headers and nothing else: no error text, no reply field."""

from __future__ import annotations

import asyncio
import pickle

import pytest

from reviewbench.config.reviewers import AnthropicConfig, OpenAIConfig
from reviewbench.reviewers import ReviewerError, make_reviewer

from .servers import Reply

KEY = "sk-test-SECRET-4f1d2c9a77"
VARIABLE = "RB_TEST_SECRET_KEY"


def configs(server):
    return {
        "openai": OpenAIConfig(
            kind="openai", base_url=server.openai_base_url, model="m", api_key_env=VARIABLE
        ),
        "anthropic": AnthropicConfig(
            kind="anthropic", base_url=server.anthropic_base_url, model="m", api_key_env=VARIABLE
        ),
    }


SCENARIOS = [
    Reply.answer("src/app.py:2 high fine"),
    Reply.rate_limited("1"),
    Reply.server_error(503),
    # Endpoints that echo the key back must not make us repeat it.
    Reply.status(401, f'{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}'.encode()),
    Reply.malformed(f"not json {KEY}".encode()),
    Reply.raw({"unexpected": KEY}),
    Reply.raw({"error": {"message": f"bad key {KEY}", "type": KEY, "code": 500}}),
    Reply.truncated(),
    Reply.drop(),
]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_key_is_sent_in_the_header_and_never_shown(llm_server, make_packet, monkeypatch, kind):
    monkeypatch.setenv(VARIABLE, KEY)
    llm_server.script(*SCENARIOS)
    texts: list[str] = []

    async def go():
        reviewer = make_reviewer(configs(llm_server)[kind])
        texts.extend([repr(reviewer), repr(vars(reviewer)), repr(pickle.dumps(reviewer.config))])
        try:
            for _ in SCENARIOS:
                try:
                    reply = await reviewer.review(make_packet(), None)
                except ReviewerError as exc:
                    texts.extend([str(exc), repr(exc), repr(exc.args)])
                else:
                    texts.extend(str(value) for value in vars(reply).values())
                texts.append(repr(vars(reviewer)))
        finally:
            await reviewer.aclose()

    asyncio.run(go())
    assert llm_server.count == len(SCENARIOS)
    header = "authorization" if kind == "openai" else "x-api-key"
    expected = f"Bearer {KEY}" if kind == "openai" else KEY
    assert all(r.headers[header] == expected for r in llm_server.requests)
    assert sum("[redacted]" in t for t in texts) >= 3  # the echoes were there, and were hidden
    leaks = [t for t in texts if KEY in t]
    assert leaks == []


def test_missing_key_error_names_the_variable_not_a_value(llm_server, make_packet, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # a key in another variable is not used or shown
    with pytest.raises(ReviewerError) as info:
        asyncio.run(make_reviewer(configs(llm_server)["openai"]).review(make_packet(), None))
    assert VARIABLE in str(info.value) and KEY not in str(info.value)
