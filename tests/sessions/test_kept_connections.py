"""Requests from a web process that does not own an execution's stream, over a connection it keeps.

A real agentctl (and, over SSH, the real sshd ``scripts/test`` runs) on
127.0.0.1. The owning process is played by a stream client of the test's own;
the process under test is a :class:`Runner` that owns nothing. What is counted
is what agentctl sees: the connections it has accepted and still holds.
"""

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import psutil
import pytest
import pytest_asyncio
from channels.db import database_sync_to_async

from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient, AgentStreamNotConnected, NotSent
from kandev_web.executor.ssh import SshAgentctl, SshExecutor
from kandev_web.sessions import ownership
from kandev_web.sessions.models import AgentExecution, SessionState, TaskSession
from kandev_web.sessions.routing import Endpoint
from kandev_web.sessions.runner import Runner
from testing_support.agentctl import open_session
from testing_support.executor import ssh_test_host

MOCK_AGENT = [sys.executable, "-m", "kandev_web.mock_agent"]

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def accepted(pid: int, url: str) -> set[int]:
    """The peer ports of the connections agentctl (``pid``, listening at ``url``) holds open now."""
    port = urlsplit(url).port
    return {
        c.raddr.port
        for c in psutil.Process(pid).net_connections()
        if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
    }


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for a state to be reached, checking it as the loop turns."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


#: A WebSocket close frame (code 1000) as a server sends it, unmasked.
CLOSE_FRAME = b"\x88\x02\x03\xe8"


class Relay:
    """A TCP relay in front of agentctl: what a route between two machines is, and can lose."""

    def __init__(self, target: str) -> None:
        self._target = urlsplit(target)
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None
        #: The client sides of the connections ``hang_up`` left hanging.
        self._hung: set[asyncio.StreamWriter] = set()
        #: Set when the client answered a close frame ``hang_up`` sent in agentctl's name.
        self.client_closing = asyncio.Event()
        #: Set by ``cut_after_the_next_frame``: the next client frame reaches agentctl, and no answer comes back.
        self._cutting = False
        #: How many connections the relay took.
        self.accepted = 0
        self.url = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}{self._target.path}"

    async def break_connections(self) -> None:
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    async def hang_up(self) -> None:
        """Close the first connection's WebSocket as agentctl would, then relay nothing more on it, keeping it open.

        The client is left closing: it has the close frame, and waits for the
        TCP connection to end, which it does only after its close timeout.
        """
        client = self._writers[0]
        self._hung.add(client)
        client.write(CLOSE_FRAME)
        await client.drain()

    def cut_after_the_next_frame(self) -> None:
        """Lose the route just after the client's next frame went through: it was written, its answer is lost."""
        self._cutting = True

    async def close(self) -> None:
        await self.break_connections()
        if self._server is not None:
            self._server.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self._target.hostname, self._target.port)
        self._writers += [writer, up_writer]
        self.accepted += 1

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, from_client: bool) -> None:
            try:
                while data := await source.read(65536):
                    if writer in self._hung:
                        if from_client and data[0] & 0x0F == 0x8:  # the client's close frame
                            self.client_closing.set()
                        continue
                    sink.write(data)
                    if from_client and self._cutting:
                        self._cutting = False
                        await self.break_connections()
                        return
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer, from_client=True), pipe(up_reader, writer, from_client=False))


@pytest_asyncio.fixture
async def agentctl() -> AsyncIterator[tuple[AgentctlProcess, AgentStreamClient]]:
    """agentctl for the mock agent, with its owning stream (another process's) connected and a session open."""
    process = await launch(MOCK_AGENT)
    owner = AgentStreamClient(process.url, process.token)
    await owner.connect()
    await open_session(owner, agent_id="mock-agent")
    yield process, owner
    await owner.close()
    await process.stop()


@dataclass
class Relayed:
    """A non-owning runner reaching ``process`` through ``relay``, and the connections agentctl held before."""

    process: AgentctlProcess
    relay: Relay
    runner: Runner
    endpoint: Endpoint
    others: set[int]

    async def ask(self) -> dict:
        return await self.runner.request(self.endpoint, "agent.permissions.list", {})

    def held(self) -> set[int]:
        """The connections agentctl holds that the runner opened."""
        return accepted(self.process.pid, self.process.url) - self.others


@pytest_asyncio.fixture
async def relayed(agentctl) -> AsyncIterator[Relayed]:
    process, _owner = agentctl
    relay = Relay(process.url)
    await relay.start()
    runner = Runner()
    yield Relayed(process, relay, runner, Endpoint(7, relay.url, process.token), accepted(process.pid, process.url))
    # The route first: a connection a test left hanging then ends at once, not after its close timeout (20 s).
    await relay.close()
    await runner._kept.close()


@database_sync_to_async
def an_execution(task, url: str, token: str) -> tuple[int, int]:
    """A running session's execution at ``url``: (its id, its session's)."""
    session = TaskSession.objects.create(task=task, state=SessionState.RUNNING)
    return AgentExecution.objects.create(session=session, url=url, token=token).pk, session.pk


async def test_a_non_owning_process_sends_its_successive_requests_over_one_connection(agentctl):
    process, _owner = agentctl
    others = accepted(process.pid, process.url)
    runner = Runner()
    endpoint = Endpoint(7, process.url, process.token)
    assert await runner.request(endpoint, "agent.permissions.list", {}) == {"pending": []}
    first = accepted(process.pid, process.url) - others
    assert len(first) == 1  # kept open after the request
    assert await runner.request(endpoint, "agent.permissions.list", {}) == {"pending": []}
    assert accepted(process.pid, process.url) - others == first
    await runner._kept.close()


async def test_two_requests_at_once_share_the_connection_and_both_get_their_answer(agentctl):
    process, _owner = agentctl
    others = accepted(process.pid, process.url)
    runner = Runner()
    endpoint = Endpoint(7, process.url, process.token)
    answers = await asyncio.gather(*(runner.request(endpoint, "agent.permissions.list", {}) for _ in range(5)))
    assert answers == [{"pending": []}] * 5
    assert len(accepted(process.pid, process.url) - others) == 1
    await runner._kept.close()


async def test_a_connection_broken_between_requests_is_replaced_and_the_next_request_succeeds(relayed):
    await relayed.ask()
    before = relayed.held()
    await relayed.relay.break_connections()
    await until(lambda: not relayed.held())
    assert await relayed.ask() == {"pending": []}
    after = relayed.held()
    assert len(after) == 1
    assert after != before


async def test_a_request_on_a_connection_agentctl_was_closing_is_sent_again_on_a_new_one(relayed):
    """The kept connection still looks open, but its close began: the request was never written, so it is resent."""
    await relayed.ask()
    hung = relayed.held()
    await relayed.relay.hang_up()
    await relayed.relay.client_closing.wait()
    async with asyncio.timeout(5):  # not after the hung connection's close timeout (20 s)
        assert await relayed.ask() == {"pending": []}
    assert len(relayed.held() - hung) == 1  # a new connection carried it


async def test_a_request_whose_answer_was_lost_is_not_sent_again(relayed):
    """It reached agentctl, which may have acted on it: an answer sent twice would be refused the second time."""
    await relayed.ask()
    relayed.relay.cut_after_the_next_frame()
    with pytest.raises(AgentStreamNotConnected) as lost:
        await relayed.ask()
    assert not isinstance(lost.value, NotSent)
    assert relayed.relay.accepted == 1  # no second connection tried to send it again
    assert await relayed.ask() == {"pending": []}
    assert relayed.relay.accepted == 2  # the next request has a connection of its own


async def test_an_idle_kept_connection_is_closed_after_the_idle_time(agentctl):
    process, _owner = agentctl
    others = accepted(process.pid, process.url)
    runner = Runner(kept_idle_seconds=0.5)
    await runner.request(Endpoint(7, process.url, process.token), "agent.permissions.list", {})
    assert len(accepted(process.pid, process.url) - others) == 1
    await until(lambda: not accepted(process.pid, process.url) - others)
    assert accepted(process.pid, process.url) == others  # the owner's stream is untouched


async def test_a_connection_opened_ahead_carries_the_first_request(relayed):
    """A question shown here whose stream another process holds: the connection is opened before Submit."""
    await relayed.runner.reach(relayed.endpoint)
    assert relayed.relay.accepted == 1
    assert len(relayed.held()) == 1
    assert await relayed.ask() == {"pending": []}
    assert relayed.relay.accepted == 1  # the answer found it open


async def test_a_connection_opened_ahead_and_not_used_is_closed_after_the_idle_time(agentctl):
    process, _owner = agentctl
    others = accepted(process.pid, process.url)
    runner = Runner(kept_idle_seconds=0.5)
    await runner.reach(Endpoint(7, process.url, process.token))
    assert len(accepted(process.pid, process.url) - others) == 1
    await until(lambda: not accepted(process.pid, process.url) - others)


async def test_an_agentctl_that_cannot_be_reached_ahead_is_left_to_the_request():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{unused.getsockname()[1]}/agent/stream"
    runner = Runner()
    endpoint = Endpoint(7, url, "token")
    await runner.reach(endpoint)  # nothing to say yet: no one asked for anything
    with pytest.raises(AgentStreamNotConnected):
        await runner.request(endpoint, "agent.permissions.list", {})


async def test_a_kept_connection_ends_when_agentctl_does():
    process = await launch(MOCK_AGENT)
    runner = Runner()
    endpoint = Endpoint(7, process.url, process.token)
    await runner.request(endpoint, "agent.initialize", {"agent_id": "mock-agent", "runtime_flags": {}})
    assert runner._kept.holds(7)
    await runner.request(endpoint, "agent.shutdown", {})
    await process.wait()
    await until(lambda: not runner._kept.holds(7))


async def test_a_process_that_adopts_the_execution_serves_its_requests_from_the_owned_stream(agentctl, make_task):
    process, _owner = agentctl
    task = await database_sync_to_async(make_task)()
    execution_id, session_id = await an_execution(task, process.url, process.token)
    others = accepted(process.pid, process.url)
    runner = Runner()
    endpoint = Endpoint(execution_id, process.url, process.token)
    await runner.request(endpoint, "agent.permissions.list", {})
    kept = accepted(process.pid, process.url) - others
    await runner._adopt(ownership.Orphan(execution_id, session_id, process.url, process.token))
    owned = accepted(process.pid, process.url) - others
    assert len(owned) == 1
    assert owned != kept  # the kept connection closed; the owned stream is open
    assert await runner.request(endpoint, "agent.permissions.list", {}) == {"pending": []}
    assert accepted(process.pid, process.url) - others == owned
    await runner._stop_process(execution_id)


# --- Over SSH: the kept connection runs through a tunnel kept with it ----------------------------------------


def listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections() if c.status == psutil.CONN_LISTEN}


@pytest_asyncio.fixture
async def over_ssh() -> AsyncIterator[tuple[SshAgentctl, SshExecutor]]:
    """agentctl started over SSH by another process (the owner), which keeps its stream."""
    launcher = SshExecutor(ssh_test_host())
    started = await launcher.launch(MOCK_AGENT, env={}, token="t", workdir="", workdir_name="task-kept")
    owner = AgentStreamClient(started.url, "t")
    await owner.connect()
    await open_session(owner, agent_id="mock-agent")
    yield started, launcher
    await owner.close()
    await started.stop()
    await launcher.close()


async def test_over_ssh_successive_requests_share_one_tunnel_and_one_connection(over_ssh):
    started, _ = over_ssh
    others = accepted(started.pid, started.remote_url)
    tunnels_before = listening_ports()
    runner = Runner()
    endpoint = Endpoint(7, started.remote_url, "t", via=ssh_test_host())
    await runner.request(endpoint, "agent.permissions.list", {})
    first, tunnel = accepted(started.pid, started.remote_url) - others, listening_ports() - tunnels_before
    assert len(first) == 1
    assert len(tunnel) == 1  # both kept after the request
    assert await runner.request(endpoint, "agent.permissions.list", {}) == {"pending": []}
    assert accepted(started.pid, started.remote_url) - others == first
    assert listening_ports() - tunnels_before == tunnel
    await runner._kept.close()
    assert not tunnel & listening_ports()  # closed with its connection
    for executor in runner._executors.values():
        await executor.close()


async def test_over_ssh_a_lost_ssh_connection_is_replaced_and_the_next_request_succeeds(over_ssh):
    started, _ = over_ssh
    others = accepted(started.pid, started.remote_url)
    runner = Runner()
    endpoint = Endpoint(7, started.remote_url, "t", via=ssh_test_host())
    await runner.request(endpoint, "agent.permissions.list", {})
    (ssh,) = runner._executors.values()
    await ssh.close()  # the SSH connection the tunnel ran through is gone
    await until(lambda: not runner._kept.holds(7))
    assert await runner.request(endpoint, "agent.permissions.list", {}) == {"pending": []}
    assert len(accepted(started.pid, started.remote_url) - others) == 1
    await runner._kept.close()
    await ssh.close()
