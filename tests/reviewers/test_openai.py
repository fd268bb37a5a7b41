"""The OpenAI-compatible reviewer against a real loopback server."""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from reviewbench.config.reviewers import OpenAIConfig
from reviewbench.reviewers import ReviewerError, make_reviewer
from reviewbench.reviewers._http import ClientPool, parse_retry_after
from reviewbench.reviewers.messages import GUIDANCE_HEADING
from reviewbench.reviewers.openai import OpenAIReviewer

from .servers import FROZEN_TEXT, Reply


def config(server, **overrides) -> OpenAIConfig:
    fields = {
        "kind": "openai",
        "base_url": server.openai_base_url,
        "model": "test-model",
        "api_key_env": None,
    }
    fields.update(overrides)
    return OpenAIConfig(**fields)


def review(cfg: OpenAIConfig, packet, *, calls: int = 1):
    """Run ``calls`` reviews on one reviewer; the replies or the first error."""

    async def go():
        reviewer = make_reviewer(cfg)
        try:
            return [await reviewer.review(packet, None) for _ in range(calls)]
        finally:
            await reviewer.aclose()

    replies = asyncio.run(go())
    return replies[0] if calls == 1 else replies


def review_error(cfg: OpenAIConfig, packet) -> ReviewerError:
    with pytest.raises(ReviewerError) as info:
        review(cfg, packet)
    return info.value


def test_registered_kind_builds_the_openai_reviewer(llm_server):
    assert isinstance(make_reviewer(config(llm_server)), OpenAIReviewer)


def test_answer_text_model_and_usage(llm_server, make_packet):
    llm_server.script(Reply.answer("src/app.py:2 high drops zeros", tokens_in=123, tokens_out=7))
    reply = review(config(llm_server), make_packet())
    assert reply.text == "src/app.py:2 high drops zeros"
    assert reply.model == "test-model"
    assert (reply.tokens_in, reply.tokens_out) == (123, 7)
    assert reply.findings is None  # parsed from the text by the runner


def test_model_id_of_the_response_is_kept_when_it_differs(llm_server, make_packet):
    llm_server.script(Reply.answer(model="routed-elsewhere-7b"))
    reply = review(config(llm_server, model="requested-model"), make_packet())
    assert reply.model == "routed-elsewhere-7b"
    assert llm_server.requests[0].json["model"] == "requested-model"


def test_request_wire_format(llm_server, make_packet, monkeypatch):
    monkeypatch.setenv("RB_TEST_OPENAI_KEY", "k-123")
    cfg = config(
        llm_server,
        api_key_env="RB_TEST_OPENAI_KEY",
        temperature=0.2,
        top_p=0.9,
        seed=7,
        max_tokens=300,
        headers={"X-Title": "reviewbench"},
    )
    review(cfg, make_packet())
    [request] = llm_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer k-123"
    assert request.headers["x-title"] == "reviewbench"
    assert request.headers["content-type"] == "application/json"
    body = request.json
    assert body["model"] == "test-model"
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (
        0.2,
        0.9,
        7,
        300,
    )
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_unset_sampling_parameters_are_not_sent(llm_server, make_packet):
    review(
        config(llm_server, temperature=None, top_p=None, seed=None, max_tokens=None), make_packet()
    )
    body = llm_server.requests[0].json
    assert set(body) == {"model", "messages"}
    assert "authorization" not in llm_server.requests[0].headers


def test_messages_carry_prompt_guidance_title_paths_diff_and_files(llm_server, make_packet):
    packet = make_packet(
        guidance="Never use bare except.",
        files={"src/app.py": "x = '```'\n"},
        diff=make_packet().diff + "+ a line with ``` backticks\n",
    )
    review(config(llm_server), packet)
    system, user = (m["content"] for m in llm_server.requests[0].json["messages"])
    assert system.startswith(packet.prompt.rstrip())
    assert f"{GUIDANCE_HEADING}\n\nNever use bare except." in system
    assert "Title: Update app module" in user
    assert "- src/app.py" in user
    assert "````diff\n" + packet.diff in user  # a fence longer than any backtick run inside
    assert "### src/app.py\n```\nx = '```'\n```" not in user  # would be closed early
    assert "x = '```'" in user


def test_no_guidance_means_the_prompt_alone(llm_server, make_packet):
    review(config(llm_server), make_packet(guidance="   "))
    system = llm_server.requests[0].json["messages"][0]["content"]
    assert system == make_packet().prompt
    assert "Post-patch contents" not in llm_server.requests[0].json["messages"][1]["content"]


def test_undecodable_bytes_in_the_diff_are_sent_as_replacement_characters(llm_server, make_packet):
    diff = make_packet().diff + "+# caf" + b"\xe9".decode("utf-8", "surrogateescape") + "\n"
    assert review(config(llm_server), make_packet(diff=diff)).text == FROZEN_TEXT
    assert "# caf\ufffd" in llm_server.requests[0].json["messages"][1]["content"]


def test_429_is_transient_with_retry_after_seconds(llm_server, make_packet):
    llm_server.script(Reply.rate_limited(retry_after="7"))
    error = review_error(config(llm_server), make_packet())
    assert error.transient and error.retry_after == 7.0
    assert "HTTP 429" in str(error)


def test_429_with_retry_after_http_date(llm_server, make_packet):
    when = datetime.now(UTC) + timedelta(seconds=30)
    llm_server.script(Reply.rate_limited(retry_after=format_datetime(when, usegmt=True)))
    error = review_error(config(llm_server), make_packet())
    assert error.transient
    assert 25 <= error.retry_after <= 31


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_is_transient(llm_server, make_packet, status):
    llm_server.script(Reply.server_error(status))
    error = review_error(config(llm_server), make_packet())
    assert error.transient and error.retry_after is None
    assert f"HTTP {status}" in str(error)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_is_not_transient(llm_server, make_packet, status):
    llm_server.script(Reply.status(status, b'{"error": {"message": "model not found"}}'))
    error = review_error(config(llm_server), make_packet())
    assert not error.transient
    assert f"HTTP {status}" in str(error) and "model not found" in str(error)


def test_error_message_shows_at_most_200_chars_of_the_body_and_no_headers(llm_server, make_packet):
    body = b"A" * 150 + b"B" * 5000
    llm_server.script(Reply.status(400, body, headers={"X-Secret-Header": "hdr-value"}))
    message = str(review_error(config(llm_server), make_packet()))
    assert "A" * 150 in message and "B" * 60 not in message
    assert len(message) < 400
    assert "hdr-value" not in message


def test_malformed_json_is_not_transient(llm_server, make_packet):
    llm_server.script(Reply.malformed(b'{"choices": [{"message": '))
    error = review_error(config(llm_server), make_packet())
    assert not error.transient
    assert "not JSON" in str(error) and '{"choices": [{"message":' in str(error)


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        ({"model": "m"}, "choices"),
        ({"choices": []}, "choices"),
        ({"choices": [{"index": 0}]}, "choices[0].message"),
        ({"choices": [{"message": {"role": "assistant"}}]}, "choices[0].message.content"),
        ([1, 2], "not an object"),
    ],
)
def test_missing_fields_are_not_transient(llm_server, make_packet, body, missing):
    llm_server.script(Reply.raw(body if isinstance(body, dict) else str(body)))
    error = review_error(config(llm_server), make_packet())
    assert not error.transient
    assert missing in str(error)


def test_usage_and_model_are_optional(llm_server, make_packet):
    llm_server.script(Reply.raw({"choices": [{"message": {"content": "NO_ISSUES"}}]}))
    reply = review(config(llm_server), make_packet())
    assert (reply.text, reply.model, reply.tokens_in, reply.tokens_out) == (
        "NO_ISSUES",
        None,
        None,
        None,
    )


def test_gateway_error_reported_with_http_200(llm_server, make_packet):
    llm_server.script(Reply.raw({"error": {"message": "upstream timed out", "code": 502}}))
    error = review_error(config(llm_server), make_packet())
    assert error.transient and "upstream timed out" in str(error)


def test_truncated_body_is_transient(llm_server, make_packet):
    llm_server.script(Reply.truncated())
    error = review_error(config(llm_server), make_packet())
    assert error.transient
    assert "RemoteProtocolError" in str(error)


def test_connection_closed_without_answer_is_transient(llm_server, make_packet):
    llm_server.script(Reply.drop())
    assert review_error(config(llm_server), make_packet()).transient


def test_connection_refused_is_transient(make_packet):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once closed
    cfg = OpenAIConfig(
        kind="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key_env=None
    )
    error = review_error(cfg, make_packet())
    assert error.transient and f"127.0.0.1:{port}" in str(error)


@pytest.mark.parametrize("headers", [{"X-A": "caf\u00e9"}, {"X-B": "a\nb"}, {"bad name": "x"}])
def test_unsendable_configured_headers_are_not_transient(llm_server, make_packet, headers):
    error = review_error(config(llm_server, headers=headers), make_packet())
    assert not error.transient and "header" in str(error)
    assert llm_server.count == 0


def test_unsupported_url_is_not_transient(make_packet):
    cfg = OpenAIConfig(
        kind="openai", base_url="ftp://example.invalid/v1", model="m", api_key_env=None
    )
    assert not review_error(cfg, make_packet()).transient


def test_missing_key_variable_names_the_variable_and_sends_nothing(
    llm_server, make_packet, monkeypatch
):
    monkeypatch.delenv("RB_TEST_ABSENT_KEY", raising=False)
    error = review_error(config(llm_server, api_key_env="RB_TEST_ABSENT_KEY"), make_packet())
    assert not error.transient
    assert "RB_TEST_ABSENT_KEY" in str(error)
    assert llm_server.count == 0


def test_key_with_a_newline_is_refused_without_showing_it(llm_server, make_packet, monkeypatch):
    monkeypatch.setenv("RB_TEST_BAD_KEY", "abc\ndef-secret")
    error = review_error(config(llm_server, api_key_env="RB_TEST_BAD_KEY"), make_packet())
    assert "RB_TEST_BAD_KEY" in str(error) and "def-secret" not in str(error)


def test_slow_answer_is_cancelled_by_the_runner_timeout_and_the_client_stays_usable(
    llm_server, make_packet
):
    llm_server.script(Reply.slow(5.0))

    async def go():
        reviewer = make_reviewer(config(llm_server))
        try:
            # Cancelled as the runner's timeout would, once the server holds the request
            # (not after a fixed delay: on a loaded machine the request may not be out yet).
            task = asyncio.ensure_future(reviewer.review(make_packet(), None))
            while llm_server.count == 0 and not task.done():
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await reviewer.review(make_packet(), None)
        finally:
            await reviewer.aclose()

    assert asyncio.run(go()).text == FROZEN_TEXT
    assert llm_server.count == 2


def test_concurrent_reviews_share_one_pooled_client(llm_server, make_packet):
    llm_server.default = Reply.answer(delay=0.2)

    async def go():
        reviewer = make_reviewer(config(llm_server))
        try:
            return await asyncio.gather(*(reviewer.review(make_packet(), None) for _ in range(40)))
        finally:
            await reviewer.aclose()

    replies = asyncio.run(go())
    assert len(replies) == 40 and all(r.text == FROZEN_TEXT for r in replies)
    assert llm_server.max_in_flight >= 30  # not serialised behind a small pool


def test_connections_are_kept_alive_across_rounds(llm_server, make_packet):
    llm_server.default = Reply.answer(delay=0.1)

    async def go():
        reviewer = make_reviewer(config(llm_server))
        try:
            for _ in range(3):
                await asyncio.gather(*(reviewer.review(make_packet(), None) for _ in range(24)))
            return reviewer._pool.size
        finally:
            await reviewer.aclose()

    shards = asyncio.run(go())
    assert llm_server.count == 72
    assert llm_server.connections <= 24  # reused, not reopened for each round
    assert shards == 24 // ClientPool.SHARD_CONNECTIONS


def test_client_pool_fills_shards_in_order_and_caps_their_number():
    pool = ClientPool()
    picks = []
    for _ in range(ClientPool.SHARD_CONNECTIONS * ClientPool.MAX_SHARDS + 3):
        index = pool._pick()
        pool._load[index] += 1
        picks.append(index)
    assert picks[: ClientPool.SHARD_CONNECTIONS] == [0] * ClientPool.SHARD_CONNECTIONS
    assert pool.size == ClientPool.MAX_SHARDS  # beyond 256 connections requests queue
    pool._load[5] -= 2
    assert pool._pick() == 5
    asyncio.run(pool.aclose())
    assert pool.size == 0


def test_aclose_is_idempotent_and_a_closed_reviewer_can_review_again(llm_server, make_packet):
    async def go():
        reviewer = make_reviewer(config(llm_server))
        await reviewer.aclose()  # never used
        first = await reviewer.review(make_packet(), None)
        await reviewer.aclose()
        await reviewer.aclose()
        return first

    assert asyncio.run(go()).text == FROZEN_TEXT


def test_parse_retry_after():
    now = datetime(2024, 1, 1, tzinfo=UTC)
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after": "1.5"})) == 1.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    date = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": date}), now=now) == 90.0
    past = format_datetime(now - timedelta(seconds=90), usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": past}), now=now) == 0.0
    for junk in ("soon", "-3", "nan", "inf", ""):
        assert parse_retry_after(httpx.Headers({"retry-after": junk})) is None
    assert parse_retry_after(httpx.Headers({})) is None
