"""Fixtures of the sandbox tests: review packets, as the reviewer tests build them."""

import pytest

from ..reviewers.conftest import _make_packet


@pytest.fixture
def make_packet():
    return _make_packet
