"""The real Codex ACP adapter scripts/test installs (``testing_support.codex``)."""

import pytest

from testing_support.codex import Codex, find_codex


@pytest.fixture(scope="session")
def codex() -> Codex:
    return find_codex()
