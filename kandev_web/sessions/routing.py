"""Sending a request to an execution's agentctl from whichever web process the operator is connected to.

The owning process sends it on its owning stream; any other one on a
connection it keeps to that agentctl (:mod:`.kept_connections`), reached
through a tunnel of its own when agentctl runs on an executor host.
"""

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from kandev_web.agentctl.stream_client import AgentStreamClient, AgentStreamNotConnected, StreamError
from kandev_web.db import agent_sync_to_async
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshError, SshExecutor

from . import kept_connections, ownership

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class Endpoint:
    """Where one execution's agentctl listens."""

    execution_id: int
    url: str
    token: str = field(repr=False)
    #: The SSH executor host it runs on, when the caller knows it; else it is looked up.
    via: SshAddress | None = None


class RequestRouting:
    """The runner's requests, to executions it owns or not.

    Mixed into :class:`~.runner.Runner`, which holds its owning streams
    (``_owned``), the connections it keeps (``_kept``) and its connections to
    executor hosts (``_executor``).
    """

    _owned: dict[int, AgentStreamClient]
    _kept: kept_connections.KeptConnections
    _executor: Callable[[SshAddress], SshExecutor]

    async def request(
        self, endpoint: Endpoint, action: str, payload: dict, timeout: float = REQUEST_TIMEOUT, *, ordered: bool = True
    ):
        """Send one request to an execution's agentctl, owned here or not.

        ``ordered=False``: its answer does not wait for the notifications
        read before it to be applied (``AgentStreamClient.request``); on a
        kept connection, whose notifications are ignored, it never does.
        """
        client = self._owned.get(endpoint.execution_id)
        if client is not None:
            return await client.request(action, payload, timeout=timeout, ordered=ordered)
        if not endpoint.url:
            raise AgentStreamNotConnected("the agent has not started yet")
        # Another process owns this stream; a connection this process keeps
        # carries the request, and the notifications it also receives are ignored.
        return await self._kept.request(
            endpoint.execution_id, self._route(endpoint), endpoint.token, action, payload, timeout
        )

    async def reach(self, endpoint: Endpoint) -> None:
        """Open the connection a request to an agentctl owned elsewhere will need, before it is needed.

        For a question shown here whose agent's stream another process holds:
        the first answer from here then skips the SSH tunnel and the
        handshake. A connection that cannot be opened now is left to the
        request, which says why.
        """
        if endpoint.execution_id in self._owned or not endpoint.url or self._kept.holds(endpoint.execution_id):
            return
        try:
            await self._kept.open(endpoint.execution_id, self._route(endpoint), endpoint.token)
        except (StreamError, SshError, OSError) as error:
            logger.info("no connection to agentctl %s ahead of a request: %s", endpoint.execution_id, error)

    def _route(self, endpoint: Endpoint) -> kept_connections.Route:
        @contextlib.asynccontextmanager
        async def route() -> AsyncIterator[str]:
            # Looked up only when the connection opens: its kept requests skip a database hop.
            via = endpoint.via or await agent_sync_to_async(ownership.ssh_host_of)(endpoint.execution_id)
            if via is None:
                yield endpoint.url
                return
            # Over SSH: through a tunnel of this process's own, kept as long as the connection.
            async with self._executor(via).transient_tunnel(endpoint.url) as url:
                yield url

        return route
