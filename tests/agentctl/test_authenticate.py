"""ACP sign-in through a real agentctl and a scripted agent that requires it.

The agent answers ``session/new`` with ``-32000`` "Authentication required"
until ``authenticate`` succeeds; agentctl signs in when it can do so unattended
and otherwise fails the session with a sentence saying what to run where.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from kandev_web.agentctl.stream_client import StreamError, ValidationFailed

pytestmark = pytest.mark.asyncio

AUTH_REQUIRED = {"code": -32000, "message": "Authentication required"}
API_KEY = {"id": "api-key", "name": "Use an API key", "type": "env_var", "vars": [{"name": "SCRIPTED_API_KEY"}]}
GOOGLE = {"id": "oauth-personal", "name": "Log in with Google", "description": "Opens a browser to sign in"}
CLAUDE_LOGIN = {
    "id": "claude-login",
    "name": "Log in with Claude Code",
    "description": "Run `claude /login` in the terminal",
    "_meta": {"terminal-auth": {"command": "claude", "args": ["/login"], "label": "Claude login"}},
}


def _initialized(methods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"expect": "initialize"},
        {
            "reply": {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "scripted", "title": "Scripted agent"},
                "authMethods": methods,
            }
        },
    ]


async def _initialize(client) -> dict[str, Any]:
    return await client.request("agent.initialize", {"agent_id": "scripted", "runtime_flags": {}})


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


async def test_an_env_var_method_signs_in_when_session_new_says_authentication_is_required(
    start_agentctl, connect, scripted
) -> None:
    argv = scripted.argv(
        [
            *_initialized([GOOGLE, API_KEY]),
            {"expect": "session/new"},
            {"reply_error": AUTH_REQUIRED},
            {"expect": "authenticate"},
            {"reply": {}},
            {"expect": "session/new"},
            {"reply": {"sessionId": "sess-1"}},
        ],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv, env=_env(SCRIPTED_API_KEY="sk-test")))
    initialized = await _initialize(client)
    assert [(m["id"], m["needs_person"], m["env_vars"]) for m in initialized["auth_methods"]] == [
        ("oauth-personal", True, []),
        ("api-key", False, ["SCRIPTED_API_KEY"]),
    ]

    session = await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []})

    assert session["session_id"] == "sess-1"
    assert [frame["params"] for frame in scripted.received("authenticate")] == [{"methodId": "api-key"}]
    assert [frame.get("method") for frame in scripted.received() if "method" in frame][-3:] == [
        "session/new",
        "authenticate",
        "session/new",
    ]


async def test_a_chosen_method_signs_in_before_session_new(start_agentctl, connect, scripted) -> None:
    argv = scripted.argv(
        [
            *_initialized([API_KEY]),
            {"expect": "authenticate"},
            {"reply": {}},
            {"expect": "session/new"},
            {"reply": {"sessionId": "sess-1"}},
        ],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv, env=_env(SCRIPTED_API_KEY="sk-test")))
    await _initialize(client)

    session = await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "api-key"})

    assert session["session_id"] == "sess-1"
    methods = [frame["method"] for frame in scripted.received() if "method" in frame]
    assert methods == ["initialize", "authenticate", "session/new"]


async def test_a_browser_login_fails_the_session_with_what_to_run_where(start_agentctl, connect, scripted) -> None:
    argv = scripted.argv(
        [*_initialized([GOOGLE]), {"expect": "session/new"}, {"reply_error": AUTH_REQUIRED}],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv))
    await _initialize(client)

    with pytest.raises(StreamError) as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []})

    error = refused.value
    assert error.code == "AUTH_REQUIRED"
    assert error.message == (
        "Scripted agent needs someone to sign in with “Log in with Google”, which Kandev cannot do for it: "
        f"on {socket.gethostname()}, as the user that runs its agents, run `{argv[0]}` in a terminal and sign in, "
        "then start the session again."
    )
    assert "{" not in error.message
    assert error.details["auth_method"]["id"] == "oauth-personal"
    assert scripted.received("authenticate") == []


async def test_a_chosen_terminal_login_is_never_attempted_and_names_its_command(
    start_agentctl, connect, scripted
) -> None:
    argv = scripted.argv(
        [*_initialized([CLAUDE_LOGIN]), {"expect": "session/new"}, {"reply_error": AUTH_REQUIRED}],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv))
    await _initialize(client)

    with pytest.raises(StreamError, match=r"run `claude /login` in a terminal") as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "claude-login"})

    assert refused.value.code == "AUTH_REQUIRED"
    assert scripted.received("authenticate") == []


async def test_an_env_var_method_without_its_variable_says_which_to_add(start_agentctl, connect, scripted) -> None:
    argv = scripted.argv(_initialized([API_KEY]), handshake=False)
    env = {k: v for k, v in os.environ.items() if k != "SCRIPTED_API_KEY"}
    client, _ = await connect(await start_agentctl(argv, env=env))
    await _initialize(client)

    with pytest.raises(StreamError, match=r"SCRIPTED_API_KEY: add them to the agent profile's environment") as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "api-key"})

    assert refused.value.code == "AUTH_REQUIRED"
    assert scripted.received("authenticate") == []


async def test_an_authenticate_refusal_is_a_sentence_with_the_agents_reason(start_agentctl, connect, scripted) -> None:
    argv = scripted.argv(
        [*_initialized([API_KEY]), {"expect": "authenticate"}, {"reply_error": {"code": -32603, "message": "bad key"}}],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv, env=_env(SCRIPTED_API_KEY="wrong")))
    await _initialize(client)

    with pytest.raises(StreamError) as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "api-key"})

    assert refused.value.code == "AUTH_REQUIRED"
    assert refused.value.message.startswith("Scripted agent refused to sign in with “Use an API key”: bad key.")


async def test_an_auth_method_the_agent_does_not_offer_is_a_validation_error(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized([API_KEY]), handshake=False)))
    await _initialize(client)

    with pytest.raises(ValidationFailed, match=r"it offers: api-key"):
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "nope"})
