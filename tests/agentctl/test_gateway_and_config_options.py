"""The gateway sign-in and config options at session start, through a real agentctl and a scripted agent.

A ``gateway`` method (``_meta.gateway``, as codex-acp offers it) is signed in
with the session request's ``gateway`` and the headers in agentctl's
environment; ``config_options`` become ``session/set_config_option`` calls
right after ``session/new``. The headers are a secret: masked, whole and value
by value, in whatever agentctl says.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from kandev_web.agentctl.auth import GATEWAY_HEADERS_VAR
from kandev_web.agentctl.scrub import MASK, SECRET_NAMES_VAR
from kandev_web.agentctl.stream_client import StreamError, ValidationFailed

pytestmark = pytest.mark.asyncio

GATEWAY = {
    "id": "gateway",
    "name": "Custom model gateway",
    "description": "Use a custom gateway to authenticate and access models",
    "_meta": {"gateway": {"protocol": "openai", "restartRequired": "false"}},
}
TOKEN = "gw-token-0123456789abcdef"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
BASE_URL = "http://127.0.0.1:9/v1"


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


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def _headers_env() -> dict[str, str]:
    return _env(**{GATEWAY_HEADERS_VAR: json.dumps(HEADERS), SECRET_NAMES_VAR: GATEWAY_HEADERS_VAR})


async def test_the_gateway_is_advertised_only_when_asked_for(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized([GATEWAY]), handshake=False)))
    answer = await client.request(
        "agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}, "auth_gateway": True}
    )
    assert answer["client_capabilities"] == {"_meta": {"terminal_output": True}, "auth": {"_meta": {"gateway": True}}}
    (sent,) = scripted.received("initialize")
    assert sent["params"]["clientCapabilities"]["auth"] == {"_meta": {"gateway": True}}


async def test_auth_gateway_must_be_a_boolean(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv([], handshake=False)))
    with pytest.raises(ValidationFailed, match="auth_gateway must be true or false"):
        await client.request("agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}, "auth_gateway": "yes"})


async def test_the_gateway_method_signs_in_with_base_url_headers_and_provider_then_sets_the_options(
    start_agentctl, connect, scripted
) -> None:
    argv = scripted.argv(
        [
            *_initialized([GATEWAY]),
            {"expect": "authenticate"},
            {"reply": {}},
            {"expect": "session/new"},
            {"reply": {"sessionId": "sess-1"}},
            {"expect": "session/set_config_option"},
            {"reply": {"configOptions": []}},
            {"expect": "session/set_config_option"},
            {"reply": {"configOptions": []}},
        ],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv, env=_headers_env()))
    await client.request("agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}, "auth_gateway": True})

    session = await client.request(
        "agent.session.new",
        {
            "cwd": "/tmp",
            "mcp_servers": [],
            "auth_method": "gateway",
            "gateway": {"base_url": BASE_URL, "provider_name": "kandev"},
            "config_options": {"collaboration_mode": "plan", "mode": "read-only"},
        },
    )

    assert session["session_id"] == "sess-1"
    assert [frame["params"] for frame in scripted.received("authenticate")] == [
        {
            "methodId": "gateway",
            "_meta": {"gateway": {"baseUrl": BASE_URL, "headers": HEADERS, "providerName": "kandev"}},
        }
    ]
    assert [frame["params"] for frame in scripted.received("session/set_config_option")] == [
        {"sessionId": "sess-1", "configId": "collaboration_mode", "value": "plan"},
        {"sessionId": "sess-1", "configId": "mode", "value": "read-only"},
    ]


async def test_a_gateway_method_without_a_gateway_says_what_to_set(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized([GATEWAY]), handshake=False)))
    await client.request("agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}, "auth_gateway": True})
    with pytest.raises(StreamError, match="set the gateway's base URL in the agent profile") as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], "auth_method": "gateway"})
    assert refused.value.code == "AUTH_REQUIRED"
    assert scripted.received("authenticate") == []


async def test_a_refused_config_option_fails_the_session_with_the_agents_reason_and_masks_the_headers(
    start_agentctl, connect, scripted
) -> None:
    argv = scripted.argv(
        [
            *_initialized([GATEWAY]),
            {"expect": "authenticate"},
            {"reply": {}},
            {"expect": "session/new"},
            {"reply": {"sessionId": "sess-1"}},
            {"expect": "session/set_config_option"},
            {"reply_error": {"code": -32602, "message": f"unknown option (headers were Bearer {TOKEN})"}},
        ],
        handshake=False,
    )
    client, _ = await connect(await start_agentctl(argv, env=_headers_env()))
    await client.request("agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}, "auth_gateway": True})
    with pytest.raises(StreamError) as refused:
        await client.request(
            "agent.session.new",
            {
                "cwd": "/tmp",
                "mcp_servers": [],
                "auth_method": "gateway",
                "gateway": {"base_url": BASE_URL},
                "config_options": {"nope": "x"},
            },
        )
    assert refused.value.message.startswith("the agent refused session/set_config_option nope: unknown option")
    assert TOKEN not in refused.value.message
    assert MASK in refused.value.message


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({"gateway": {"base_url": "ftp://x/v1"}}, "gateway.base_url must be an http or https URL"),
        ({"gateway": {"base_url": BASE_URL, "provider_name": ""}}, "gateway.provider_name must be a non-empty string"),
        ({"config_options": {"mode": 1}}, "config_options must be an object of non-empty option ids"),
        ({"config_options": ["mode=plan"]}, "config_options must be an object of non-empty option ids"),
    ],
)
async def test_a_bad_gateway_or_config_options_is_a_validation_error(
    start_agentctl, connect, scripted, extra, problem
) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv(_initialized([GATEWAY]), handshake=False)))
    await client.request("agent.initialize", {"agent_id": "codex-acp", "runtime_flags": {}})
    with pytest.raises(ValidationFailed, match=problem):
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": [], **extra})
