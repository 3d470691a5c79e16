"""Loading the captured Claude bridge fixtures (tests/fixtures/claude-agent-acp/<version>/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURE_ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "claude-agent-acp"
BRIDGE_VERSIONS = ("0.65.0", "0.101.0")

LoadFixture = Callable[[str, str], object]


def _load(version: str, name: str) -> object:
    with (FIXTURE_ROOT / version / name).open(encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def load_fixture() -> LoadFixture:
    """`load_fixture("0.65.0", "ask_single_request.json")` -> the decoded JSON."""
    return _load
