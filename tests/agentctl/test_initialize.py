"""agent.initialize and agent.session.new: what is spawned, what is advertised, what is refused."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import kandev_web.agentctl
from kandev_web.agentctl.capabilities import canonical
from kandev_web.agentctl.stream_client import Conflict, NotFound, StreamError, ValidationFailed

pytestmark = pytest.mark.asyncio

FIXTURES = Path(kandev_web.agentctl.__file__).parent / "fixtures"

NEEDS_AGENT = [
    ("agent.session.new", {"cwd": "/tmp", "mcp_servers": []}),
    ("agent.prompt", {"session_id": "s", "prompt": [{"type": "text", "text": "hi"}]}),
    ("agent.cancel", {"session_id": "s"}),
    ("agent.permissions.respond", {"pending_id": "p", "option_id": "o"}),
    ("agent.permissions.list", {}),
    ("agent.elicitations.respond", {"pending_id": "p", "answers": [], "rejected": True, "reject_reason": ""}),
    ("agent.elicitations.list", {}),
]


@pytest.mark.parametrize(("action", "payload"), NEEDS_AGENT)
async def test_requests_before_initialize_get_conflict(start_agentctl, connect, action: str, payload: dict) -> None:
    client, _ = await connect(await start_agentctl())
    with pytest.raises(Conflict, match="not initialized"):
        await client.request(action, payload)


async def test_a_second_initialize_gets_conflict(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    await client.request("agent.initialize", {"agent_id": "mock", "runtime_flags": {}})
    with pytest.raises(Conflict, match="already"):
        await client.request("agent.initialize", {"agent_id": "mock", "runtime_flags": {}})


@pytest.mark.parametrize(
    ("agent_id", "flag", "expected"),
    [
        ("claude-acp", False, {"_meta": {"terminal_output": True}}),
        ("cursor-acp", False, {"_meta": {"parameterizedModelPicker": True, "terminal_output": True}}),
        ("claude-acp", True, {"_meta": {"terminal_output": True}, "elicitation": {"form": {}}}),
        (
            "cursor-acp",
            True,
            {"_meta": {"parameterizedModelPicker": True, "terminal_output": True}, "elicitation": {"form": {}}},
        ),
    ],
)
async def test_initialize_returns_exactly_the_capabilities_the_agent_received(
    start_agentctl, connect, scripted, agent_id: str, flag: bool, expected: dict
) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv([], handshake=True)))
    answer = await client.request(
        "agent.initialize", {"agent_id": agent_id, "runtime_flags": {"features.acpElicitation": flag}}
    )
    assert answer == {
        "protocol_version": 1,
        "agent_info": {"name": "scripted"},
        "agent_capabilities": {},
        "client_capabilities": expected,
        "auth_methods": [],  # an addition: this agent offers none
    }
    (sent,) = scripted.received("initialize")
    assert sent["params"]["protocolVersion"] == 1
    assert sent["params"]["clientCapabilities"] == expected
    if not flag:
        fixture = "client_capabilities_cursor-acp.json" if agent_id == "cursor-acp" else "client_capabilities.json"
        assert canonical(sent["params"]["clientCapabilities"]).encode() == (FIXTURES / fixture).read_bytes()


async def test_initialize_without_runtime_flags_leaves_elicitation_off(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    answer = await client.request("agent.initialize", {"agent_id": "mock"})
    assert answer["client_capabilities"] == {"_meta": {"terminal_output": True}}


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({}, "agent_id must be a non-empty string"),
        ({"agent_id": ""}, "agent_id must be a non-empty string"),
        ({"agent_id": "a", "runtime_flags": []}, "runtime_flags must be an object"),
        ({"agent_id": "a", "runtime_flags": {"features.acpElicitation": "yes"}}, "must be true or false"),
        ({"agent_id": "a", "runtime_flags": {"features.acpUrlElicitation": 1}}, "acpUrlElicitation"),
        ({"agent_id": "a", "url_http_loopback": "yes"}, "url_http_loopback must be true or false"),
    ],
)
async def test_initialize_validates_its_payload(start_agentctl, connect, payload: dict, problem: str) -> None:
    client, _ = await connect(await start_agentctl())
    with pytest.raises(ValidationFailed) as refused:
        await client.request("agent.initialize", payload)
    assert any(problem in each for each in refused.value.details["problems"])
    # A refused payload spawns nothing, so a correct one still may.
    await client.request("agent.initialize", {"agent_id": "mock"})


async def test_the_agent_gets_agentctls_environment_without_the_token(start_agentctl, connect, scripted) -> None:
    agentctl = await start_agentctl(scripted.argv([]), env={**os.environ, "SCRIPTED_AGENT_MARKER": "passed on"})
    client, _ = await connect(agentctl)
    await client.request("agent.initialize", {"agent_id": "scripted"})
    assert scripted.header()["env"] == {"SCRIPTED_AGENT_MARKER": "passed on"}


async def test_the_agent_is_spawned_lazily_by_initialize(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv([])))
    with pytest.raises(Conflict):
        await client.request("agent.elicitations.list")
    with pytest.raises(FileNotFoundError):
        scripted.header()
    await client.request("agent.initialize", {"agent_id": "scripted"})
    assert scripted.header()["pid"] > 0


async def test_an_agent_command_that_cannot_run_fails_initialize(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl(["/nonexistent/agent"]))
    with pytest.raises(StreamError) as refused:
        await client.request("agent.initialize", {"agent_id": "x"})
    assert refused.value.code == "INTERNAL_ERROR"
    assert "/nonexistent/agent" in refused.value.message
    with pytest.raises(Conflict):
        await client.request("agent.session.new", {"cwd": "/tmp"})


async def test_an_agent_that_refuses_initialize_fails_it_with_the_agents_error(
    start_agentctl, connect, scripted
) -> None:
    steps = [{"expect": "initialize"}, {"reply_error": {"code": -32000, "message": "Authentication required"}}]
    client, _ = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))
    with pytest.raises(StreamError) as refused:
        await client.request("agent.initialize", {"agent_id": "x"})
    assert refused.value.code == "INTERNAL_ERROR"
    assert refused.value.details["error"] == {"code": -32000, "message": "Authentication required"}


async def test_session_new_passes_cwd_and_mcp_servers_and_returns_the_session_id(
    start_agentctl, connect, scripted
) -> None:
    # An agent that speaks HTTP MCP gets HTTP servers as given (test_mcp_transport.py: the others).
    speaks_http = {"mcpCapabilities": {"http": True}}
    client, _ = await connect(await start_agentctl(scripted.argv([], capabilities=speaks_http)))
    await client.request("agent.initialize", {"agent_id": "scripted"})
    server = {"type": "http", "name": "kandev", "url": "http://127.0.0.1:8000/mcp", "headers": []}
    answer = await client.request("agent.session.new", {"cwd": "/work", "mcp_servers": [server]})
    assert answer == {"session_id": scripted.session_id, "mcp_transports": {"kandev": "http"}}
    (sent,) = scripted.received("session/new")
    assert sent["params"] == {"cwd": "/work", "mcpServers": [server]}


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"cwd": "relative/path"},
        {"cwd": 5},
        {"cwd": "/tmp", "mcp_servers": "none"},
        {"cwd": "/tmp", "mcp_servers": [1]},
    ],
)
async def test_session_new_validates_its_payload(start_agentctl, connect, payload: dict) -> None:
    client, _ = await connect(await start_agentctl())
    await client.request("agent.initialize", {"agent_id": "mock"})
    with pytest.raises(ValidationFailed):
        await client.request("agent.session.new", payload)


async def test_prompt_and_cancel_need_a_known_session(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    await client.request("agent.initialize", {"agent_id": "mock"})
    with pytest.raises(NotFound):
        await client.request("agent.prompt", {"session_id": "nope", "prompt": [{"type": "text", "text": "hi"}]})
    with pytest.raises(NotFound):
        await client.request("agent.cancel", {"session_id": "nope"})


async def test_the_mock_agent_also_runs_as_a_module(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl([sys.executable, "-m", "kandev_web.mock_agent"]))
    answer = await client.request("agent.initialize", {"agent_id": "mock"})
    assert answer["agent_info"]["name"] == "kandev-mock-agent"
