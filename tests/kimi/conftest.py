"""Real Kimi Code, installed by scripts/test with its node 22 (``testing_support.kimi``)."""

import pytest

from testing_support.kimi import Kimi, find_kimi


@pytest.fixture(scope="session")
def kimi() -> Kimi:
    """The installed Kimi Code: a failure saying what is missing when it is not installed."""
    return find_kimi()
