"""The mock agent keeps its sessions on disk and takes them up again in a new process.

Spoken to directly over its stdio, as agentctl does, so that what ``session/load``
replays is seen (agentctl keeps it from its clients: ``tests/agentctl/test_session_resume.py``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kandev_web.agentctl.jsonrpc import LINE_LIMIT, JsonRpcError, JsonRpcPeer
from kandev_web.mock_agent.store import ENV_VAR
from testing_support.agents import MOCK_AGENT

pytestmark = pytest.mark.asyncio


class MockProcess:
    """One mock-agent process and an ACP client on its stdio that keeps every session/update."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin
        assert process.stdout
        self.process = process
        self.updates: list[dict[str, Any]] = []
        self.peer = JsonRpcPeer(
            process.stdout, process.stdin, notifications={"session/update": self.updates.append}, label="agent"
        )
        self._reading = asyncio.create_task(self.peer.run())

    async def request(self, method: str, params: Any) -> Any:
        return await asyncio.wait_for(self.peer.request(method, params), 10)

    async def capabilities(self) -> dict[str, Any]:
        answer = await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return answer["agentCapabilities"]

    async def prompt(self, session_id: str, text: str) -> str:
        """What the agent answered, its message chunks joined."""
        before = len(self.updates)
        answer = await self.request("session/prompt", {"sessionId": session_id, "prompt": [_text(text)]})
        assert answer == {"stopReason": "end_turn"}
        return "".join(
            note["update"]["content"]["text"]
            for note in self.updates[before:]
            if note["update"]["sessionUpdate"] == "agent_message_chunk"
        )

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        await self._reading


Start = Callable[..., Awaitable[MockProcess]]


@pytest_asyncio.fixture
async def start_mock(tmp_path: Path) -> AsyncIterator[Start]:
    started: list[MockProcess] = []

    async def start(*args: str, session_dir: Path | None = tmp_path / "sessions") -> MockProcess:
        env = {key: value for key, value in os.environ.items() if key != ENV_VAR}
        if session_dir is not None:
            env[ENV_VAR] = str(session_dir)
        process = await asyncio.create_subprocess_exec(
            *MOCK_AGENT, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=LINE_LIMIT
        )
        started.append(MockProcess(process))
        return started[-1]

    yield start
    for each in started:
        await each.stop()


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


async def _conversation(agent: MockProcess) -> str:
    """A session with one exchange; its id."""
    await agent.capabilities()
    session_id = (await agent.request("session/new", {"cwd": "/tmp", "mcpServers": []}))["sessionId"]
    await agent.prompt(session_id, "Use PostgreSQL, not SQLite")
    return session_id


async def test_recall_says_what_the_operator_said_earlier_in_the_session(start_mock) -> None:
    agent = await start_mock(session_dir=None)
    session_id = await _conversation(agent)
    assert await agent.prompt(session_id, "/e2e:recall") == (
        "Earlier in this session you said: “Use PostgreSQL, not SQLite”."
    )


async def test_a_new_process_resumes_a_stored_session_without_replaying_it(start_mock) -> None:
    first = await start_mock()
    session_id = await _conversation(first)
    await first.stop()

    second = await start_mock()
    assert await second.capabilities() == {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
        "mcpCapabilities": {"http": True, "sse": False},
        "sessionCapabilities": {"resume": {}},
    }
    assert await second.request("session/resume", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}) == {}
    assert second.updates == []
    assert await second.prompt(session_id, "/e2e:recall") == (
        "Earlier in this session you said: “Use PostgreSQL, not SQLite”."
    )


async def test_session_load_replays_the_conversation_before_it_answers(start_mock) -> None:
    first = await start_mock()
    session_id = await _conversation(first)
    answered = await first.prompt(session_id, "/e2e:recall")
    await first.stop()

    second = await start_mock("--no-session-resume")
    capabilities = await second.capabilities()
    assert (capabilities["loadSession"], "sessionCapabilities" in capabilities) == (True, False)
    assert await second.request("session/load", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}) is None

    replayed = [(note["update"]["sessionUpdate"], note["update"]["content"]["text"]) for note in second.updates]
    assert replayed == [
        ("user_message_chunk", "Use PostgreSQL, not SQLite"),
        ("agent_message_chunk", replayed[1][1]),
        ("user_message_chunk", "/e2e:recall"),
        ("agent_message_chunk", answered),
    ]
    assert 'You said: "Use PostgreSQL, not SQLite"' in replayed[1][1]
    assert {note["sessionId"] for note in second.updates} == {session_id}
    with pytest.raises(JsonRpcError) as refused:
        await second.request("session/resume", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []})
    assert refused.value.code == -32601  # not offered, so not answered


@pytest.mark.parametrize("session_id", ["mock-000000000000", "../sessions/x", "", "mock-0123456789ab.json"])
async def test_a_session_it_never_stored_is_refused_as_not_found(start_mock, session_id: str) -> None:
    agent = await start_mock()
    await agent.capabilities()
    for method in ("session/resume", "session/load"):
        with pytest.raises(JsonRpcError) as refused:
            await agent.request(method, {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []})
        assert (refused.value.code, refused.value.message) == (-32002, "Session not found")
    assert agent.updates == []


async def test_without_a_session_directory_it_offers_nothing_and_stores_nothing(start_mock, tmp_path: Path) -> None:
    agent = await start_mock(session_dir=None)
    capabilities = await agent.capabilities()
    assert (capabilities["loadSession"], "sessionCapabilities" in capabilities) == (False, False)
    await _conversation(agent)
    with pytest.raises(JsonRpcError) as refused:
        await agent.request("session/load", {"sessionId": "mock-000000000000", "cwd": "/tmp", "mcpServers": []})
    assert refused.value.code == -32601
    assert list(tmp_path.iterdir()) == []
