"""agentctl's log lines name the web app's execution they serve: JSON objects like the web app's, secrets masked.

The web process tells agentctl which execution it is (``KANDEV_EXECUTION_ID``)
and its own log format (``KANDEV_LOG_FORMAT``); the agent gets neither.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shlex
from pathlib import Path

import pytest

from kandev_web.agentctl.cli import EXECUTION_VAR, LOG_FORMAT_VAR, TOKEN_VAR
from kandev_web.agentctl.launcher import agentctl_command
from kandev_web.agentctl.scrub import SECRET_NAMES_VAR
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox, open_session, text_prompt

pytestmark = pytest.mark.asyncio

KEY = "sk-mock-" + secrets.token_hex(16)


async def _run_a_turn(env: dict[str, str], agent_argv: list[str], log: Path, workdir: Path) -> None:
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *agentctl_command(), "--", *agent_argv, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env
        )
    try:
        assert process.stdout
        ready = json.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        inbox = Inbox()
        async with AgentStreamClient(ready["url"], env[TOKEN_VAR], on_notification=inbox) as client:
            session_id = await open_session(client, agent_id="mock", cwd=str(workdir))
            await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("/e2e:echo-secret")})
            await inbox.next("agent.exited", timeout=15)
        await asyncio.wait_for(process.wait(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_every_line_is_a_json_object_naming_the_execution_with_secrets_masked(mock_agent, tmp_path):
    log, workdir, seen = tmp_path / "agentctl.log", tmp_path / "work", tmp_path / "agent.env"
    workdir.mkdir()
    env = {
        **os.environ,
        TOKEN_VAR: secrets.token_urlsafe(32),
        "KANDEV_AGENTCTL_EXIT_GRACE": "1s",
        "MOCK_API_KEY": KEY,
        SECRET_NAMES_VAR: "MOCK_API_KEY",
        EXECUTION_VAR: "42",
        LOG_FORMAT_VAR: "json",
    }
    recording = ["sh", "-c", f"env > {shlex.quote(str(seen))}; exec {shlex.join(mock_agent)}"]

    await _run_a_turn(env, recording, log, workdir)

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines
    assert all(line["execution_id"] == "42" and line["process"] == "agentctl" for line in lines)
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert any(line["message"] == "agent stderr: debug: calling the API with key=[secret]" for line in lines)
    assert KEY not in log.read_text()
    agent_env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert EXECUTION_VAR not in agent_env
    assert LOG_FORMAT_VAR not in agent_env
    assert agent_env["MOCK_API_KEY"] == KEY


async def test_text_lines_name_the_execution_too(mock_agent, tmp_path):
    log, workdir = tmp_path / "agentctl.log", tmp_path / "work"
    workdir.mkdir()
    env = {**os.environ, TOKEN_VAR: secrets.token_urlsafe(32), "KANDEV_AGENTCTL_EXIT_GRACE": "1s", EXECUTION_VAR: "7"}
    env.pop(LOG_FORMAT_VAR, None)

    await _run_a_turn(env, mock_agent, log, workdir)

    lines = log.read_text().splitlines()
    assert lines
    assert all(line.startswith("kandev-agentctl ") for line in lines if not line.startswith((" ", "Trace")))
    assert any(" execution_id=7: " in line for line in lines)
