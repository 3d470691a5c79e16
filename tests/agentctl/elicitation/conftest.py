"""Loading the captured Claude bridge fixtures (tests/fixtures/claude-agent-acp/<version>/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURE_ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "claude-agent-acp"


@pytest.fixture(scope="session")
def load_fixture() -> Callable[[str, str], object]:
    """`load_fixture("0.65.0", "ask_single_request.json")` -> the decoded JSON."""

    def load(version: str, name: str) -> object:
        with (FIXTURE_ROOT / version / name).open(encoding="utf-8") as handle:
            return json.load(handle)

    return load
