"""An agent started with a profile's secret has it, and agentctl says it nowhere: not in its log, its stdout,
a frame, or the stderr tail a failed session shows (docs/decisions/operator.md#secrets-at-rest)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from pathlib import Path

import pytest

from kandev_web.agentctl.cli import TOKEN_VAR
from kandev_web.agentctl.launcher import agentctl_command
from kandev_web.agentctl.scrub import MASK, SECRET_NAMES_VAR
from kandev_web.agentctl.stream_client import AgentStreamClient, StreamError
from testing_support.agentctl import Inbox, message_text, open_session, text_prompt

pytestmark = pytest.mark.asyncio

KEY = "sk-mock-" + secrets.token_hex(16)


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_the_agent_gets_the_secret_and_agentctl_never_says_it(
    mock_agent: list[str], tmp_path: Path, level: str
) -> None:
    token = secrets.token_urlsafe(32)
    log, workdir = tmp_path / "agentctl.log", tmp_path / "work"
    workdir.mkdir()
    env = {
        **os.environ,
        TOKEN_VAR: token,
        "KANDEV_AGENTCTL_LOG_LEVEL": level,
        "KANDEV_AGENTCTL_EXIT_GRACE": "1s",
        "MOCK_API_KEY": KEY,
        SECRET_NAMES_VAR: "MOCK_API_KEY",
    }
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *agentctl_command(), "--", *mock_agent, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env
        )
    try:
        assert process.stdout
        ready_line = await asyncio.wait_for(process.stdout.readline(), 10)
        inbox = Inbox()
        async with AgentStreamClient(json.loads(ready_line)["url"], token, on_notification=inbox) as client:
            session_id = await open_session(client, agent_id="mock", cwd=str(workdir))
            await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:echo-secret")})
            exited = await inbox.next("agent.exited", timeout=15)
        rest_of_stdout = await asyncio.wait_for(process.stdout.read(), 60)
        await asyncio.wait_for(process.wait(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    # The agent was given the key: it wrote it to a file in its working directory.
    assert (workdir / "secret.txt").read_text() == KEY
    # What it repeated reached the stream masked: its message, its diff, its stderr tail.
    frames = json.dumps(inbox.received)
    assert KEY not in frames
    assert message_text(inbox, session_id) == f"My key is {MASK} today."
    (diff,) = [
        note["update"]["content"][0]
        for note in inbox.all("session.update")
        if "content" in note["update"] and note["update"].get("sessionUpdate") == "tool_call"
    ]
    assert diff["newText"] == MASK
    assert f"key={MASK}" in exited["stderr_tail"]
    assert exited["exit_code"] == 3
    # And agentctl's own output: its log (the relayed stderr line included) and its stdout.
    text = log.read_text()
    assert "agent stderr: debug: calling the API with key=[secret]" in text
    assert KEY not in text
    assert KEY.encode() not in ready_line + rest_of_stdout


async def test_an_agent_refusal_quoting_its_key_fails_the_start_with_the_key_masked(
    start_agentctl, connect, scripted
) -> None:
    """The sentence a failed start shows (the session's error) is agentctl's answer: masked like every frame."""
    refusal = {"code": -32603, "message": f"Invalid API key {KEY} for this organisation"}
    argv = scripted.argv(
        [
            {"expect": "initialize"},
            {"reply": {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "scripted"}}},
            {"expect": "session/new"},
            {"reply_error": refusal},
        ],
        handshake=False,
    )
    env = {**os.environ, "MOCK_API_KEY": KEY, SECRET_NAMES_VAR: "MOCK_API_KEY"}
    client, _ = await connect(await start_agentctl(argv, env=env))
    await client.request("agent.initialize", {"agent_id": "scripted", "runtime_flags": {}})
    with pytest.raises(StreamError) as refused:
        await client.request("agent.session.new", {"cwd": "/tmp", "mcp_servers": []})
    assert KEY not in str(refused.value.message)
    assert KEY not in json.dumps(refused.value.details)
    assert refused.value.message.endswith(f"Invalid API key {MASK} for this organisation")
