"""A session's modes, slash commands and on/off options, through a real agentctl and the mock agent.

``agent.session.set_mode`` and ``agent.session.set_config_option`` reach the
agent as ACP ``session/set_mode`` and ``session/set_config_option`` (a boolean
with ``type: "boolean"``); the agent's updates come back as ``session.update``;
the mock agent's ``session-settings`` scenario says what it now works with.
``session.configOptions.boolean`` is advertised only with its flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp.schema import NewSessionResponse, SessionNotification

from kandev_web.agentctl.capabilities import BOOLEAN_CONFIG_OPTIONS_FLAG, ELICITATION_FLAG, canonical
from kandev_web.agentctl.stream_client import NotFound, StreamError, ValidationFailed
from testing_support.agents import MOCK_AGENT

pytestmark = pytest.mark.asyncio

SETTINGS_AGENT = [*MOCK_AGENT, "--session-settings"]
FIXTURE = Path(__file__).parents[2] / "kandev_web/agentctl/fixtures/client_capabilities.json"


async def _session(start_agentctl, connect, *, boolean: bool):
    agentctl = await start_agentctl(SETTINGS_AGENT)
    client, inbox = await connect(agentctl)
    flags = {ELICITATION_FLAG: False, BOOLEAN_CONFIG_OPTIONS_FLAG: boolean}
    initialized = await client.request("agent.initialize", {"agent_id": "mock-agent", "runtime_flags": flags})
    session = await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []})
    return client, inbox, initialized, session


async def _says(client, inbox, session_id: str) -> str:
    """What the session-settings scenario says: the agent's own account of its mode and options."""
    payload = {"session_id": session_id, "prompt": [{"type": "text", "text": "/e2e:session-settings"}]}
    before = len(inbox.received)
    turn_id = (await client.request("agent.prompt", payload))["turn_id"]
    await inbox.next("turn.completed", lambda p: p["turn_id"] == turn_id)
    return "".join(
        note["update"]["content"]["text"]
        for action, note in inbox.received[before:]
        if action == "session.update" and note["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def _kind(kind: str):
    return lambda payload: payload["update"]["sessionUpdate"] == kind


async def test_modes_commands_and_a_boolean_option_go_both_ways(start_agentctl, connect) -> None:
    client, inbox, initialized, session = await _session(start_agentctl, connect, boolean=True)
    assert initialized["client_capabilities"]["session"] == {"configOptions": {"boolean": {}}}
    session_id = session["session_id"]
    assert session["modes"]["currentModeId"] == "code"
    assert [mode["id"] for mode in session["modes"]["availableModes"]] == ["ask", "code", "plan"]
    assert session["config_options"] == [
        {
            "id": "verbose",
            "name": "Verbose answers",
            "description": "Explain every step",
            "type": "boolean",
            "currentValue": False,
        }
    ]
    commands = await inbox.next("session.update", _kind("available_commands_update"))
    assert [command["name"] for command in commands["update"]["availableCommands"]] == ["review", "test", "summarize"]

    assert await client.request("agent.session.set_mode", {"session_id": session_id, "mode_id": "plan"}) == {
        "success": True
    }
    update = await inbox.next("session.update", _kind("current_mode_update"))
    assert update["update"] == {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    assert await _says(client, inbox, session_id) == "Mode: plan. Options: verbose off."

    answer = await client.request(
        "agent.session.set_config_option", {"session_id": session_id, "config_id": "verbose", "value": True}
    )
    assert [(o["id"], o["currentValue"]) for o in answer["config_options"]] == [("verbose", True)]
    update = await inbox.next("session.update", _kind("config_option_update"))
    assert update["update"]["configOptions"] == answer["config_options"]
    assert await _says(client, inbox, session_id) == "Mode: plan. Options: verbose on."
    # What the mock agent says is ACP as the SDK's schema has it.
    NewSessionResponse.model_validate(
        {"sessionId": session_id, "modes": session["modes"], "configOptions": session["config_options"]}
    )
    for note in inbox.all("session.update"):
        SessionNotification.model_validate({"sessionId": session_id, "update": note["update"]})


async def test_without_the_flag_nothing_is_advertised_and_no_boolean_option_is_offered(start_agentctl, connect) -> None:
    client, _, initialized, session = await _session(start_agentctl, connect, boolean=False)
    # AC-02: the flag off leaves the object Kandev always sent.
    assert canonical(initialized["client_capabilities"]) == FIXTURE.read_text().strip()
    assert "config_options" not in session  # the agent offers none to a client that cannot show them
    assert session["modes"]["currentModeId"] == "code"  # modes need no capability
    with pytest.raises(StreamError, match="the agent refused session/set_config_option verbose") as refused:
        await client.request(
            "agent.session.set_config_option",
            {"session_id": session["session_id"], "config_id": "verbose", "value": True},
        )
    assert refused.value.code == "INTERNAL_ERROR"
    assert json.dumps(refused.value.details["error"]["data"]) == '{"details": "no option \'verbose\'"}'


async def test_a_mode_the_agent_refuses_is_reported_and_changes_nothing(start_agentctl, connect) -> None:
    client, inbox, _, session = await _session(start_agentctl, connect, boolean=True)
    session_id = session["session_id"]
    with pytest.raises(StreamError, match="the agent refused session/set_mode: Invalid params"):
        await client.request("agent.session.set_mode", {"session_id": session_id, "mode_id": "yolo"})
    assert await _says(client, inbox, session_id) == "Mode: code. Options: verbose off."


@pytest.mark.parametrize(
    ("action", "payload", "problem"),
    [
        ("agent.session.set_mode", {"mode_id": ""}, "mode_id must be a non-empty string"),
        ("agent.session.set_mode", {"mode_id": "x" * 201}, "mode_id must be a non-empty string"),
        ("agent.session.set_mode", {"mode_id": 3}, "mode_id must be a non-empty string"),
        ("agent.session.set_config_option", {"config_id": "verbose", "value": 1}, "value must be true, false"),
        ("agent.session.set_config_option", {"config_id": "verbose"}, "value must be true, false"),
        ("agent.session.set_config_option", {"config_id": None, "value": True}, "config_id must be a non-empty"),
    ],
)
async def test_bad_payloads_are_refused_before_the_agent_hears_of_them(
    start_agentctl, connect, action, payload, problem
) -> None:
    client, _, _, session = await _session(start_agentctl, connect, boolean=True)
    with pytest.raises(ValidationFailed, match=problem):
        await client.request(action, {"session_id": session["session_id"], **payload})


async def test_an_unknown_session_is_not_found(start_agentctl, connect) -> None:
    client, _, _, _ = await _session(start_agentctl, connect, boolean=True)
    with pytest.raises(NotFound):
        await client.request("agent.session.set_mode", {"session_id": "nope", "mode_id": "plan"})


async def test_a_resumed_session_says_its_modes_and_options_again(start_agentctl, connect, tmp_path) -> None:
    env = {"KANDEV_MOCK_SESSION_DIR": str(tmp_path)}
    flags = {BOOLEAN_CONFIG_OPTIONS_FLAG: True}
    first = await start_agentctl(SETTINGS_AGENT, env=env)
    client, _ = await connect(first)
    await client.request("agent.initialize", {"agent_id": "mock-agent", "runtime_flags": flags})
    session_id = (await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []}))["session_id"]
    await first.stop()

    second = await start_agentctl(SETTINGS_AGENT, env=env)
    client, _ = await connect(second)
    await client.request("agent.initialize", {"agent_id": "mock-agent", "runtime_flags": flags})
    resumed = await client.request("agent.session.resume", {"session_id": session_id, "cwd": "/tmp", "mcp_servers": []})
    assert resumed["modes"]["currentModeId"] == "code"
    assert [o["id"] for o in resumed["config_options"]] == ["verbose"]
