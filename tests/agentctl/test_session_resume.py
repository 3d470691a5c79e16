"""``agent.session.resume`` over a real agentctl and a scripted agent: which ACP method, what reaches the client.

The same action over the mock agent, after a killed agentctl, is in
``test_resume_after_agentctl_died.py``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.capabilities import resume_method
from kandev_web.agentctl.stream_client import Conflict, StreamError, ValidationFailed
from testing_support.agentctl import message_text, text_prompt

SESSION = "sess-earlier"
RESUME_AND_LOAD = {"sessionCapabilities": {"resume": {}}, "loadSession": True}
LOAD_ONLY = {"loadSession": True}


def _initialized(capabilities: dict[str, Any], methods: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    answer = {"protocolVersion": 1, "agentCapabilities": capabilities, "authMethods": methods or []}
    return [{"expect": "initialize"}, {"reply": answer}]


def _chunk(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}}


async def _resume(client, **payload: Any) -> dict[str, Any]:
    await client.request("agent.initialize", {"agent_id": "scripted", "runtime_flags": {}})
    return await client.request("agent.session.resume", {"session_id": SESSION, "cwd": "/work", **payload})


@pytest.mark.asyncio
async def test_an_agent_that_can_resume_gets_session_resume_and_the_session_takes_prompts(
    start_agentctl, connect, scripted
) -> None:
    steps = [
        *_initialized(RESUME_AND_LOAD),
        {"expect": "session/resume"},
        {"reply": {}},
        {"expect": "session/prompt"},
        {"send": _chunk("Still here.")},
        {"reply": {"stopReason": "end_turn"}},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))

    assert await _resume(client) == {"session_id": SESSION, "mcp_transports": {}, "method": "resume"}
    (sent,) = scripted.received("session/resume")
    assert sent["params"] == {"sessionId": SESSION, "cwd": "/work", "mcpServers": []}

    turn = await client.request("agent.prompt", {"session_id": SESSION, "prompt": text_prompt("go on")})
    completed = await inbox.next("turn.completed")
    assert completed == {"session_id": SESSION, "turn_id": turn["turn_id"], "stop_reason": "end_turn"}
    assert message_text(inbox, SESSION) == "Still here."
    assert not scripted.received("session/load")


@pytest.mark.asyncio
async def test_session_load_keeps_the_replayed_history_from_the_client_but_not_what_follows(
    start_agentctl, connect, scripted
) -> None:
    steps = [
        *_initialized(LOAD_ONLY),
        {"expect": "session/load"},
        {"send": _chunk("What I asked before", "user_message_chunk")},
        {"send": _chunk("What it answered before")},
        {"reply": None},
        # Right behind the answer, before agentctl's coroutine has run again.
        {"send": _chunk("After the load")},
    ]
    client, inbox = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))

    assert (await _resume(client))["method"] == "load"

    after = await inbox.next("session.update")
    assert after["update"]["content"]["text"] == "After the load"
    # Updates keep the agent's order, so a forwarded replay would have come first.
    assert len(inbox.all("session.update")) == 1
    (sent,) = scripted.received("session/load")
    assert sent["params"] == {"sessionId": SESSION, "cwd": "/work", "mcpServers": []}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "capabilities",
    [{}, {"loadSession": False}, {"sessionCapabilities": {"resume": None}}, {"sessionCapabilities": {"list": {}}}],
)
async def test_an_agent_that_advertises_neither_is_not_asked(
    start_agentctl, connect, scripted, capabilities: dict[str, Any]
) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized(capabilities), handshake=False)))
    with pytest.raises(Conflict) as refused:
        await _resume(client)
    assert str(refused.value) == "the agent cannot resume a session"
    assert [frame["method"] for frame in scripted.received() if "method" in frame] == ["initialize"]
    # Nothing was opened: the session takes no prompt.
    with pytest.raises(StreamError) as refused:
        await client.request("agent.prompt", {"session_id": SESSION, "prompt": text_prompt("hi")})
    assert refused.value.code == "NOT_FOUND"


@pytest.mark.asyncio
async def test_resuming_a_session_that_is_already_open_here_is_a_conflict(start_agentctl, connect, scripted) -> None:
    steps = [*_initialized(RESUME_AND_LOAD), {"expect": "session/resume"}, {"reply": {}}]
    client, _ = await connect(await start_agentctl(scripted.argv(steps, handshake=False)))
    await _resume(client)
    with pytest.raises(Conflict, match="already open"):
        await client.request("agent.session.resume", {"session_id": SESSION, "cwd": "/work"})
    assert len(scripted.received("session/resume")) == 1


@pytest.mark.asyncio
async def test_a_resume_refused_for_want_of_a_sign_in_signs_in_and_asks_again(
    start_agentctl, connect, scripted
) -> None:
    api_key = {"id": "api-key", "name": "Use an API key", "type": "env_var", "vars": [{"name": "SCRIPTED_API_KEY"}]}
    steps = [
        *_initialized(RESUME_AND_LOAD, [api_key]),
        {"expect": "session/resume"},
        {"reply_error": {"code": -32000, "message": "Authentication required"}},
        {"expect": "authenticate"},
        {"reply": {}},
        {"expect": "session/resume"},
        {"reply": {}},
    ]
    agentctl = await start_agentctl(
        scripted.argv(steps, handshake=False), env={**os.environ, "SCRIPTED_API_KEY": "sk-test"}
    )
    client, _ = await connect(agentctl)

    assert (await _resume(client))["method"] == "resume"
    assert [frame["method"] for frame in scripted.received() if "method" in frame] == [
        "initialize",
        "session/resume",
        "authenticate",
        "session/resume",
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"cwd": "/work"}, "session_id must be a non-empty string"),
        ({"session_id": "", "cwd": "/work"}, "session_id must be a non-empty string"),
        ({"session_id": SESSION}, "cwd must be an absolute path"),
        ({"session_id": SESSION, "cwd": "/work", "mcp_servers": "none"}, "mcp_servers must be a list"),
        ({"session_id": SESSION, "cwd": "/work", "auth_method": "nope"}, "auth_method must be one of"),
    ],
)
async def test_resume_validates_its_payload_like_session_new(
    start_agentctl, connect, scripted, payload: dict[str, Any], problem: str
) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized(RESUME_AND_LOAD), handshake=False)))
    await client.request("agent.initialize", {"agent_id": "scripted", "runtime_flags": {}})
    with pytest.raises(ValidationFailed) as refused:
        await client.request("agent.session.resume", payload)
    assert any(each.startswith(problem) for each in refused.value.details["problems"])


@pytest.mark.asyncio
async def test_resume_before_initialize_is_a_conflict(start_agentctl, connect) -> None:
    client, _ = await connect(await start_agentctl())
    with pytest.raises(Conflict, match="not initialized"):
        await client.request("agent.session.resume", {"session_id": SESSION, "cwd": "/work"})


@pytest.mark.parametrize(
    ("capabilities", "method"),
    [
        (RESUME_AND_LOAD, "resume"),
        ({"sessionCapabilities": {"resume": {}}}, "resume"),
        (LOAD_ONLY, "load"),
        ({"sessionCapabilities": {"resume": None}, "loadSession": True}, "load"),
        ({"loadSession": "yes"}, None),
        ({"sessionCapabilities": None}, None),
        (None, None),
        ([], None),
    ],
)
def test_resume_method_reads_the_agents_capabilities(capabilities: Any, method: str | None) -> None:
    assert resume_method(capabilities) == method


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)


SESSION_CAPABILITIES = JSON | st.dictionaries(
    st.sampled_from(["resume", "list", "fork"]), st.none() | st.just({}) | JSON, max_size=3
)
CAPABILITIES = st.fixed_dictionaries(
    {}, optional={"sessionCapabilities": SESSION_CAPABILITIES, "loadSession": JSON, "mcpCapabilities": JSON}
)


@given(capabilities=CAPABILITIES)
def test_resume_is_chosen_exactly_when_advertised_and_load_only_when_resume_is_not(capabilities: dict) -> None:
    session = capabilities.get("sessionCapabilities")
    advertises_resume = isinstance(session, dict) and isinstance(session.get("resume"), dict)
    expected = "resume" if advertises_resume else ("load" if capabilities.get("loadSession") is True else None)
    assert resume_method(capabilities) == expected
