"""The Anthropic messages reviewer against a real loopback server."""

from __future__ import annotations

import asyncio

import pytest

from reviewbench.config.reviewers import AnthropicConfig
from reviewbench.reviewers import ReviewerError, make_reviewer
from reviewbench.reviewers.anthropic import AnthropicReviewer
from reviewbench.reviewers.messages import GUIDANCE_HEADING

from .servers import FROZEN_TEXT, Reply


def config(server, **overrides) -> AnthropicConfig:
    fields = {
        "kind": "anthropic",
        "base_url": server.anthropic_base_url,
        "model": "claude-test",
        "api_key_env": None,
    }
    fields.update(overrides)
    return AnthropicConfig(**fields)


def review(cfg: AnthropicConfig, packet):
    async def go():
        reviewer = make_reviewer(cfg)
        try:
            return await reviewer.review(packet, None)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def review_error(cfg: AnthropicConfig, packet) -> ReviewerError:
    with pytest.raises(ReviewerError) as info:
        review(cfg, packet)
    return info.value


def test_registered_kind_builds_the_anthropic_reviewer(llm_server):
    assert isinstance(make_reviewer(config(llm_server)), AnthropicReviewer)


def test_answer_text_model_and_usage(llm_server, make_packet):
    llm_server.script(Reply.answer("src/app.py:2 med drops zeros", tokens_in=50, tokens_out=6))
    reply = review(config(llm_server), make_packet())
    assert reply.text == "src/app.py:2 med drops zeros"
    assert (reply.model, reply.tokens_in, reply.tokens_out) == ("claude-test", 50, 6)


def test_model_id_of_the_response_is_kept_when_it_differs(llm_server, make_packet):
    llm_server.script(Reply.answer(model="claude-other-20990101"))
    assert review(config(llm_server), make_packet()).model == "claude-other-20990101"


def test_request_wire_format(llm_server, make_packet, monkeypatch):
    monkeypatch.setenv("RB_TEST_ANTHROPIC_KEY", "ak-1")
    cfg = config(
        llm_server,
        api_key_env="RB_TEST_ANTHROPIC_KEY",
        temperature=0.5,
        top_p=0.8,
        max_tokens=99,
        anthropic_version="2023-06-01",
        headers={"anthropic-beta": "x"},
    )
    review(cfg, make_packet(guidance="Prefer pathlib."))
    [request] = llm_server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "ak-1"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["anthropic-beta"] == "x"
    assert "authorization" not in request.headers
    body = request.json
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_p"]) == (
        "claude-test",
        99,
        0.5,
        0.8,
    )
    assert body["system"].endswith(f"{GUIDANCE_HEADING}\n\nPrefer pathlib.\n")
    [message] = body["messages"]
    assert message["role"] == "user" and "Title: Update app module" in message["content"]


def test_unset_sampling_parameters_are_not_sent(llm_server, make_packet):
    review(config(llm_server, temperature=None, top_p=None), make_packet())
    assert set(llm_server.requests[0].json) == {"model", "max_tokens", "system", "messages"}
    assert "x-api-key" not in llm_server.requests[0].headers


def test_text_blocks_are_concatenated_and_other_blocks_skipped(llm_server, make_packet):
    llm_server.script(
        Reply.raw(
            {
                "model": "claude-test",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "text", "text": "src/app.py:2 high "},
                    {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                    {"type": "text", "text": "drops zeros"},
                ],
                "usage": {"input_tokens": 3, "output_tokens": 4},
            }
        )
    )
    reply = review(config(llm_server), make_packet())
    assert reply.text == "src/app.py:2 high drops zeros"
    assert (reply.tokens_in, reply.tokens_out) == (3, 4)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_rate_limits_server_errors_and_overload_are_transient(llm_server, make_packet, status):
    reply = Reply.rate_limited("4") if status == 429 else Reply.server_error(status)
    llm_server.script(reply)
    error = review_error(config(llm_server), make_packet())
    assert error.transient and f"HTTP {status}" in str(error)
    assert error.retry_after == (4.0 if status == 429 else None)


def test_overloaded_error_in_a_200_body_is_transient(llm_server, make_packet):
    llm_server.script(
        Reply.raw({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    )
    error = review_error(config(llm_server), make_packet())
    assert error.transient and "Overloaded" in str(error)


@pytest.mark.parametrize("status", [400, 401, 404])
def test_other_4xx_is_not_transient(llm_server, make_packet, status):
    llm_server.script(
        Reply.status(
            status,
            b'{"type":"error","error":{"type":"invalid_request_error","message":"bad model"}}',
        )
    )
    error = review_error(config(llm_server), make_packet())
    assert not error.transient and "bad model" in str(error)


def test_malformed_json_is_not_transient(llm_server, make_packet):
    llm_server.script(Reply.malformed(b"<html>gateway</html>"))
    error = review_error(config(llm_server), make_packet())
    assert not error.transient and "<html>gateway</html>" in str(error)


@pytest.mark.parametrize("body", [{"model": "m"}, {"content": "not a list"}])
def test_missing_content_is_not_transient(llm_server, make_packet, body):
    llm_server.script(Reply.raw(body))
    error = review_error(config(llm_server), make_packet())
    assert not error.transient and "content" in str(error)


def test_truncated_body_and_dropped_connection_are_transient(llm_server, make_packet):
    llm_server.script(Reply.truncated(), Reply.drop())
    assert review_error(config(llm_server), make_packet()).transient
    assert review_error(config(llm_server), make_packet()).transient
    assert llm_server.count == 2


def test_missing_key_variable_names_the_variable(llm_server, make_packet, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    error = review_error(config(llm_server, api_key_env="ANTHROPIC_API_KEY"), make_packet())
    assert "ANTHROPIC_API_KEY" in str(error) and not error.transient
    assert llm_server.count == 0


def test_base_url_with_trailing_slash(llm_server, make_packet):
    reply = review(config(llm_server, base_url=llm_server.anthropic_base_url + "/"), make_packet())
    assert reply.text == FROZEN_TEXT
    assert llm_server.requests[0].path == "/v1/messages"
