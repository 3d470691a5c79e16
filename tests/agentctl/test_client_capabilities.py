"""The client capabilities of ACP initialize, pinned byte for byte (AC-02 / AC-02a)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import ClientCapabilities

import kandev_web.agentctl
from kandev_web.agentctl.capabilities import (
    canonical,
    client_capabilities,
    elicitation_enabled,
    url_elicitation_enabled,
)

FIXTURES = Path(kandev_web.agentctl.__file__).parent / "fixtures"
OTHER_AGENTS = [None, "claude-acp", "codex-acp", "gemini", "mock", "cursor"]


@pytest.mark.parametrize("agent_id", OTHER_AGENTS)
def test_AC_02_flag_off_matches_the_fixture_byte_for_byte(agent_id: str | None) -> None:
    fixture = (FIXTURES / "client_capabilities.json").read_bytes()
    assert canonical(client_capabilities(agent_id, elicitation=False)).encode() == fixture


def test_AC_02_flag_off_cursor_acp_matches_its_fixture_byte_for_byte() -> None:
    fixture = (FIXTURES / "client_capabilities_cursor-acp.json").read_bytes()
    assert canonical(client_capabilities("cursor-acp", elicitation=False)).encode() == fixture


def test_AC_02_fixtures_hold_what_the_contract_states() -> None:
    assert (FIXTURES / "client_capabilities.json").read_text() == '{"_meta":{"terminal_output":true}}'
    assert (FIXTURES / "client_capabilities_cursor-acp.json").read_text() == (
        '{"_meta":{"parameterizedModelPicker":true,"terminal_output":true}}'
    )


@pytest.mark.parametrize("agent_id", [*OTHER_AGENTS, "cursor-acp"])
def test_AC_02a_flag_on_adds_elicitation_form_and_nothing_else(agent_id: str | None) -> None:
    off = client_capabilities(agent_id, elicitation=False)
    on = client_capabilities(agent_id, elicitation=True)
    assert on == {**off, "elicitation": {"form": {}}}


@pytest.mark.parametrize("elicitation", [False, True])
def test_capabilities_are_valid_acp(elicitation: bool) -> None:
    parsed = ClientCapabilities.model_validate(client_capabilities("claude-acp", elicitation=elicitation))
    assert (parsed.elicitation is not None) is elicitation
    if elicitation:
        assert parsed.elicitation.form is not None
        assert parsed.elicitation.url is None


def test_each_call_returns_a_fresh_object() -> None:
    first = client_capabilities("cursor-acp", elicitation=False)
    first["_meta"]["terminal_output"] = False
    assert client_capabilities("cursor-acp", elicitation=False)["_meta"]["terminal_output"] is True


@pytest.mark.parametrize(
    ("flags", "enabled"),
    [
        ({}, False),
        ({"features.acpElicitation": False}, False),
        ({"features.acpElicitation": True}, True),
        ({"features.acpElicitation": "true"}, False),
        ({"features.acpElicitation": 1}, False),
        ({"other": True}, False),
    ],
)
def test_only_a_true_flag_enables_elicitation(flags: dict, enabled: bool) -> None:
    assert elicitation_enabled(flags) is enabled


@pytest.mark.parametrize("agent_id", [*OTHER_AGENTS, "cursor-acp"])
def test_url_mode_adds_url_beside_form_and_never_alone(agent_id: str | None) -> None:
    form_only = client_capabilities(agent_id, elicitation=True)
    assert client_capabilities(agent_id, elicitation=True, url=True) == {
        **form_only,
        "elicitation": {"form": {}, "url": {}},
    }
    assert client_capabilities(agent_id, elicitation=False, url=True) == client_capabilities(
        agent_id, elicitation=False
    )
    parsed = ClientCapabilities.model_validate(client_capabilities(agent_id, elicitation=True, url=True))
    assert parsed.elicitation is not None
    assert parsed.elicitation.url is not None


@pytest.mark.parametrize(
    ("flags", "enabled"),
    [
        ({"features.acpElicitation": True, "features.acpUrlElicitation": True}, True),
        ({"features.acpElicitation": True, "features.acpUrlElicitation": False}, False),
        ({"features.acpElicitation": False, "features.acpUrlElicitation": True}, False),
        ({"features.acpElicitation": True}, False),
        ({"features.acpElicitation": True, "features.acpUrlElicitation": "true"}, False),
    ],
)
def test_url_mode_needs_both_flags(flags: dict, enabled: bool) -> None:
    assert url_elicitation_enabled(flags) is enabled
