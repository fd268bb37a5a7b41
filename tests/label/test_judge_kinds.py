"""The shared judge test: every registered judge kind, on the module's examples(), as every
reviewer kind is in tests/reviewers/test_kinds.py."""

from __future__ import annotations

import asyncio

import pytest

from reviewbench.config.reviewers import ReviewerConfig, capabilities_of, kinds_of
from reviewbench.errors import UsageError
from reviewbench.label.judge import ChatJudge, examples, judge_kinds, load_judge, make_asker

KINDS = judge_kinds()


def test_judge_kinds_are_reviewer_kinds_with_their_own_tables():
    reviewer = kinds_of(ReviewerConfig)
    assert list(KINDS) == ["openai", "anthropic", "command"]
    assert all(reviewer[name] is model for name, model in KINDS.items())


def test_chat_judges_are_exactly_the_chat_kinds():
    from reviewbench.label.judge import _JUDGES

    assert {k for k, (_, cls) in _JUDGES.items() if cls is ChatJudge} == {k for k in KINDS if capabilities_of(k).chat}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_judge_kind_has_an_example(kind):
    assert any(f'kind = "{kind}"' in text for text in examples())


@pytest.mark.parametrize("text", examples())
def test_judge_loads_and_builds_from_its_example(tmp_path, text):
    path = tmp_path / "judge.toml"
    path.write_text(text + "\n", encoding="utf-8")
    judge = load_judge(path)
    assert type(judge.config) is KINDS[judge.config.kind]
    assert judge.name
    asyncio.run(make_asker(judge).aclose())


def test_a_kind_that_cannot_judge_is_refused_in_one_line(tmp_path):
    path = tmp_path / "judge.toml"
    path.write_text('judge = { kind = "silent" }\n', encoding="utf-8")
    with pytest.raises(UsageError, match="judge.kind must be openai, anthropic or command, not 'silent'$"):
        load_judge(path)
