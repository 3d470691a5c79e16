"""This web process's side of its agent executions.

Agent streams live on the ASGI server's own event loop, beside the page
sockets: one loop, so a live update from an agent reaches a consumer with no
thread hop, and no agent can hold a thread that pages need. Async code (a
consumer, the answer service) awaits the runner directly; sync code (views in
their request threads) hands it a coroutine with :meth:`Runner.call`.

An execution started by this process is *owned*: the runner keeps its stream
connected and applies every notification, exactly once. Any process reaches
any live execution for requests (prompt, cancel, answers) through its stored
URL and token, so an operator may be connected to whichever web process; it
keeps that connection for its next requests (:mod:`.kept_connections`).

Starting agentctl is :mod:`.launching`'s, sending a request :mod:`.routing`'s,
and wording an executor host's failure :mod:`.ssh_reasons`'; what is here is
the owning streams: started, applied, watched, adopted.
"""

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import socket
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import psutil
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.dispatch import Signal
from django.utils.translation import gettext as _

from kandev_web.agentctl.durations import parse_duration
from kandev_web.agentctl.envelope import GAP
from kandev_web.agentctl.launcher import AgentctlProcess, LaunchError
from kandev_web.agentctl.stream_client import AgentStreamClient, Backoff, StreamError, StreamEvent
from kandev_web.db import agent_sync_to_async
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshAgentctl, SshError, SshExecutor
from kandev_web.logs import bound
from kandev_web.repositories.hosts import executor_client
from kandev_web.secret_box import SecretUnreadable

from . import events, kept_connections, ownership, resuming, signals
from .launching import LaunchPlan, auth_gateway_fields, session_payload, start_agentctl
from .routing import REQUEST_TIMEOUT, Endpoint, RequestRouting
from .ssh_reasons import ssh_reason
from .text_batches import Batch, TextBatches

logger = logging.getLogger(__name__)

#: The agentctl notifications the runner applies itself, in order, on the
#: owning process: ``handler(ref, payload)``, synchronous, in a database thread.
_HANDLERS: Mapping[str, Callable[["ExecutionRef", dict], None]] = MappingProxyType(
    {
        "session.update": lambda ref, p: events.record_session_update(ref.session_id, p.get("update") or {}),
        "permission.requested": lambda ref, p: events.record_permission_requested(ref.session_id, p),
        "permission.settled": lambda ref, p: events.record_permission_settled(ref.session_id, p),
        "turn.completed": lambda ref, p: events.record_turn_completed(ref.session_id, p),
        "agent.exited": lambda ref, p: events.record_agent_exited(ref.execution_id, p),
    }
)

#: Those other apps apply (clarifications: ``elicitation.*``), sent to them the
#: same way as a signal each: the runner does not know who listens.
_RELAYED: Mapping[str, Signal] = MappingProxyType(
    {
        "elicitation.requested": signals.elicitation_requested,
        "elicitation.settled": signals.elicitation_settled,
        "elicitation.declined": signals.elicitation_declined,
        "elicitation.completed": signals.elicitation_completed,
    }
)


def initialize_payload(agent_id: str, runtime_flags: Mapping[str, bool]) -> dict[str, object]:
    """``agent.initialize``'s payload: the agent, the execution's flags, and in development ``url_http_loopback``.

    A development deployment (``DEBUG``) may show an ``http`` sign-in page on this
    machine in URL mode; any other deployment only ``https`` (``docs/decisions/url-mode.md``).
    Without it the payload is the one the web app always sent.
    """
    payload: dict[str, object] = {"agent_id": agent_id, "runtime_flags": dict(runtime_flags)}
    if settings.DEBUG:
        payload["url_http_loopback"] = True
    return payload


def _handler(action: str) -> Callable[["ExecutionRef", dict], None] | None:
    """How the owning process applies agentctl's ``action``; ``None`` for one nobody here applies."""
    if action in _HANDLERS:
        return _HANDLERS[action]
    signal = _RELAYED.get(action)
    if signal is None:
        return None

    def relay(ref: ExecutionRef, payload: dict) -> None:
        signal.send(Runner, session_id=ref.session_id, execution_id=ref.execution_id, payload=payload)

    return relay


def _apply_once(ref: "ExecutionRef", event: StreamEvent) -> None:
    """Apply one of agentctl's notifications, and count it applied in the same transaction.

    A notification counted already (replayed to a new owner, or applied by
    the old one before it stopped beating) changes nothing.
    """
    handler = _handler(event.action)
    with transaction.atomic():
        if event.action == GAP:
            # What is no longer kept counts as applied, so the gap is told once, however often it is sent.
            first_kept = event.payload.get("first_kept_seq")
            if isinstance(first_kept, int) and ownership.count_applied(ref.execution_id, first_kept - 1):
                events.record_stream_gap(ref.session_id, event.payload)
            return
        if event.seq is not None and not ownership.count_applied(ref.execution_id, event.seq):
            return
        if handler is not None:
            handler(ref, event.payload)


def _unapplied_text(execution_id: int, batch: Batch) -> str:
    """Count the batch's chunks applied, and return the text of those that were not yet.

    One statement when none was (the batch follows the last one applied);
    a few chunks may have been, replayed to a new owner after a takeover.
    """
    first, last = batch.first_seq, batch.last_seq
    if first is None or last is None:
        return batch.text_after(0)
    if ownership.count_applied(execution_id, last, unless_through=first):
        return batch.text_after(0)
    applied = ownership.lock_applied_seq(execution_id)
    ownership.count_applied(execution_id, last)
    return batch.text_after(applied)


def _write_batches(
    batches: list[tuple["ExecutionRef", Batch]], streamed: Mapping[int, events.Streamed] = MappingProxyType({})
) -> dict[int, events.Streamed | None]:
    """Append batches of agents' text, each counting its chunks applied in the transaction that writes it.

    One transaction for them all, each batch in a savepoint of its own: a
    session deleted meanwhile drops its own text, nobody else's. Chunks
    counted already (replayed after a takeover) are left out. ``streamed``
    is where each execution's text went last (:class:`events.Streamed`); what
    is returned is where each batch's went.
    """
    written: dict[int, events.Streamed | None] = {}
    with transaction.atomic():
        for ref, batch in batches:
            try:
                with bound(execution_id=ref.execution_id, session_id=ref.session_id), transaction.atomic():
                    text = _unapplied_text(ref.execution_id, batch)
                    after = written.get(ref.execution_id) or streamed.get(ref.execution_id)
                    written[ref.execution_id] = events.record_text_chunks(ref.session_id, batch.kind, text, after=after)
            except ObjectDoesNotExist:
                logger.info("dropped the agent's text for the deleted session %s", ref.session_id)
    return written


#: How often this process looks for executions whose owner is gone.
ORPHAN_CHECK_SECONDS = 1.0

#: This process, as an execution's owner.
PROCESS_ID = ownership.process_id()


@dataclass(frozen=True)
class ExecutionRef:
    """Which session and execution a stream's notifications belong to."""

    session_id: int
    execution_id: int


class NotServing(RuntimeError):
    """Agents run inside the web server; this process has none (a management command, say)."""


class Runner(RequestRouting):
    def __init__(self, *, kept_idle_seconds: float = kept_connections.IDLE_SECONDS) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._owned: dict[int, AgentStreamClient] = {}
        self._processes: dict[int, AgentctlProcess | SshAgentctl] = {}
        self._executors: dict[SshAddress, SshExecutor] = {}
        #: Adopted executions whose agentctl nobody here can wait on: the
        #: process that started it is gone. Their URL, to check on them.
        self._unwatched: dict[int, str] = {}
        #: Connections for requests to executions another process owns.
        self._kept = kept_connections.KeptConnections(kept_idle_seconds)
        #: Which session each stream this process holds reports on.
        self._refs: dict[int, ExecutionRef] = {}
        #: The agents' streamed text, written a batch at a time (per execution).
        self._text = TextBatches(self._write_text)
        #: Where each execution's text went last, so that its next batch is one statement.
        self._streamed: dict[int, events.Streamed] = {}

    # The server's loop -----------------------------------------------------

    def ensure_started(self) -> None:
        """Bind the runner to the running server loop and start supervising (adopting orphans).

        Called by the ASGI application on every connection; the first call
        wins, so every stream of this process lives on the loop that serves pages.
        """
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._loop.create_task(self._supervise(), name="kandev agent supervisor")

    def _server_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            raise NotServing("agents run inside the web server (daphne kandev_web.asgi:application)")
        return self._loop

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future:
        """Run ``coroutine`` on the server loop from any thread, without waiting for it.

        It runs in a context of its own: the caller's (a request's thread-sensitive
        executor, say) would send its database work back to a thread that is
        blocked waiting for it, or gone.
        """
        try:
            loop = self._server_loop()
        except NotServing:
            coroutine.close()
            raise
        return contextvars.Context().run(asyncio.run_coroutine_threadsafe, coroutine, loop)

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout: float = REQUEST_TIMEOUT + 5):
        """Run ``coroutine`` on the server loop and wait for its result, from a sync thread.

        Never from the loop itself: it would wait on itself. Async callers await the coroutine.
        """
        loop = self._server_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coroutine.close()
            raise RuntimeError("Runner.call() on the server loop; await the coroutine instead")
        return self.submit(coroutine).result(timeout)

    # Starting an execution ------------------------------------------------

    async def start(self, plan: LaunchPlan, prompt: list[dict], turn_id: int) -> None:
        """Launch agentctl, initialise the agent, open the ACP session and send the first prompt."""
        with bound(execution_id=plan.execution_id, session_id=plan.session_id):
            await self._start(plan, prompt, turn_id)

    async def _start(self, plan: LaunchPlan, prompt: list[dict], turn_id: int) -> None:
        try:
            process, cwd = await start_agentctl(plan, self._executor)
        except SecretUnreadable as error:
            logger.warning("session %s not started: its secret %s does not open", plan.session_id, error.name)
            reason = _(
                "The secret %(name)s cannot be decrypted with KANDEV_SECRETS_KEY: the key changed or the stored "
                "value was altered. Set it again on the agent profile, or restore the key it was saved with."
            ) % {"name": error.name}
            await agent_sync_to_async(events.record_start_failed)(plan.session_id, reason)
            return
        except SshError as error:
            logger.warning("agentctl for session %s did not start over SSH: %s", plan.session_id, error.failure)
            await agent_sync_to_async(events.record_start_failed)(plan.session_id, ssh_reason(plan.executor, error))
            return
        except (LaunchError, StreamError, TimeoutError) as error:
            logger.warning("agentctl for session %s did not start: %s", plan.session_id, error)
            reason = str(error)
            if plan.executor is not None:
                reason = _("The executor host at %(url)s could not start the agent: %(error)s") % {
                    "url": plan.executor.url,
                    "error": reason or _("no answer in time"),
                }
            await agent_sync_to_async(events.record_start_failed)(plan.session_id, reason)
            return
        try:
            client = await self._hold(plan, process)
            session = await client.request("agent.session.new", session_payload(plan, cwd))
            await agent_sync_to_async(events.record_acp_session)(plan.session_id, session["session_id"], session)
            answer = await client.request("agent.prompt", {"session_id": session["session_id"], "prompt": prompt})
            await agent_sync_to_async(events.record_prompt_sent)(turn_id, answer["turn_id"])
        except ObjectDoesNotExist:
            logger.info("session %s was deleted while its agent started; stopping it", plan.session_id)
            await self.shutdown(Endpoint(plan.execution_id, process.url, process.token))
        except (StreamError, TimeoutError) as error:
            logger.warning("starting the agent for session %s failed: %s", plan.session_id, error)
            await agent_sync_to_async(events.record_start_failed)(plan.session_id, str(error))
            await self._stop_process(plan.execution_id)

    async def resume(self, plan: LaunchPlan, acp_session_id: str) -> None:
        """Start a new agentctl for a session whose agentctl died, and have its agent take ``acp_session_id`` up again.

        As :meth:`start`, with ``agent.session.resume`` for ``agent.session.new``
        and no prompt: the operator sends the next one (``resuming``). A
        failure is told on the session, which can then be resumed again.
        """
        with bound(execution_id=plan.execution_id, session_id=plan.session_id):
            failed = agent_sync_to_async(resuming.record_resume_failed)
            try:
                process, cwd = await start_agentctl(plan, self._executor)
            except (SecretUnreadable, SshError, LaunchError, StreamError, TimeoutError) as error:
                logger.warning("agentctl to resume session %s did not start: %s", plan.session_id, type(error).__name__)
                if isinstance(error, SecretUnreadable):
                    reason = _("its secret %(name)s does not open with KANDEV_SECRETS_KEY") % {"name": error.name}
                elif isinstance(error, SshError):
                    reason = ssh_reason(plan.executor, error)
                else:
                    reason = str(error) or _("no answer in time")
                await failed(plan.session_id, plan.execution_id, acp_session_id, reason)
                return
            try:
                client = await self._hold(plan, process)
                payload = {"session_id": acp_session_id, **session_payload(plan, cwd)}
                answer = await client.request("agent.session.resume", payload)
                await agent_sync_to_async(resuming.record_resumed)(plan.session_id, acp_session_id, answer)
            except ObjectDoesNotExist:
                logger.info("session %s was deleted while its agent resumed; stopping it", plan.session_id)
                await self.shutdown(Endpoint(plan.execution_id, process.url, process.token))
            except (StreamError, TimeoutError) as error:
                logger.warning("resuming the agent's session %s failed: %s", plan.session_id, type(error).__name__)
                await failed(plan.session_id, plan.execution_id, acp_session_id, str(error))
                await self._stop_process(plan.execution_id)

    async def _hold(self, plan: LaunchPlan, process: AgentctlProcess | SshAgentctl) -> AgentStreamClient:
        """Own the stream of an agentctl this process just launched, record where it is, and initialise its agent.

        Raises ``ObjectDoesNotExist`` when the task was deleted meanwhile,
        ``StreamError`` or ``TimeoutError`` when agentctl fails to answer.
        """
        self._processes[plan.execution_id] = process
        asyncio.get_running_loop().create_task(self._watch(plan.execution_id, process))
        ref = ExecutionRef(plan.session_id, plan.execution_id)
        client = self._stream_client(ref, process.url, process.token, after_seq=0)
        await client.connect()
        self._owned[plan.execution_id] = client
        # Over SSH, what is stored is where agentctl listens on its host:
        # every process reaches it through a tunnel of its own.
        recorded = await agent_sync_to_async(ownership.record_execution_started)(
            plan.execution_id,
            process.remote_url if isinstance(process, SshAgentctl) else process.url,
            process.token,
            process.pid,
            owner=PROCESS_ID,
            launch_id=process.launch_id if isinstance(process, SshAgentctl) else "",
        )
        if not recorded:
            raise ObjectDoesNotExist("the task was deleted while its agent started")
        initialized = await client.request(
            "agent.initialize", initialize_payload(plan.agent_id, plan.runtime_flags) | auth_gateway_fields(plan)
        )
        await agent_sync_to_async(resuming.record_agent_capabilities)(
            plan.execution_id, initialized.get("agent_capabilities")
        )
        return client

    def _executor(self, address: SshAddress) -> SshExecutor:
        """This process's one connection to an executor host, shared by its executions there."""
        client = self._executors.get(address)
        if client is None:
            client = self._executors[address] = executor_client(address)
        return client

    def _stream_client(self, ref: ExecutionRef, url: str, token: str, *, after_seq: int) -> AgentStreamClient:
        """The owning stream: applies every notification once, tracks and recovers the connection.

        It resumes after ``after_seq``, the last notification applied, on its
        first connection and on every reconnection: agentctl sends what came
        after it before anything new, so a dropped connection or a dead owner
        loses nothing.
        """
        self._refs[ref.execution_id] = ref
        return AgentStreamClient(
            url,
            token,
            on_event=lambda event: self._apply(ref, event),
            after_seq=after_seq,
            on_reconnect=lambda client: self._reconnected(ref, client),
            on_disconnect=lambda client: agent_sync_to_async(events.record_stream_state)(ref.execution_id, False),
            backoff=Backoff(initial=0.1, maximum=5.0),
            ping_interval=settings.KANDEV_AGENT_STREAM_PING_SECONDS,
        )

    async def _apply(self, ref: ExecutionRef, event: StreamEvent) -> None:
        chunk = events.text_chunk(event.payload.get("update")) if event.action == "session.update" else None
        if chunk is not None:
            await self._text.add(ref.execution_id, chunk.kind, event.seq, chunk.text)
            return
        # What was said before this is recorded before it; and may be settled by it.
        await self._text.flush(ref.execution_id)
        self._streamed.pop(ref.execution_id, None)
        try:
            with bound(execution_id=ref.execution_id, session_id=ref.session_id):
                await agent_sync_to_async(_apply_once)(ref, event)
                if event.action == GAP:
                    await self._reconcile_permissions(ref)
        except ObjectDoesNotExist:
            # The task was deleted meanwhile; its agent is being stopped (lifecycle).
            logger.info("dropped %s for the deleted session %s", event.action, ref.session_id)

    async def _reconcile_permissions(self, ref: ExecutionRef) -> None:
        """Part of the stream is lost: what permission requests are open is read from agentctl instead.

        (Its open questions are read on every connection: ``signals.stream_reconnected``.)
        """
        client = self._owned.get(ref.execution_id)
        if client is None:
            return
        try:
            # Unordered: asked while one of the stream's notifications is handled, its answer must not queue behind it.
            listed = await client.request("agent.permissions.list", {}, ordered=False, timeout=REQUEST_TIMEOUT)
        except (StreamError, TimeoutError) as error:
            logger.warning("agentctl's open permission requests could not be read: %s", error)
            return
        await agent_sync_to_async(events.reconcile_permissions)(ref.session_id, listed.get("pending", []))

    async def _write_text(self, batches: list[tuple[int, Batch]]) -> None:
        try:
            refs = [(self._refs[id_], batch) for id_, batch in batches]
            written = await agent_sync_to_async(_write_batches)(refs, dict(self._streamed))
            for execution_id, where in written.items():
                if where is None or execution_id not in self._refs:
                    self._streamed.pop(execution_id, None)
                else:
                    self._streamed[execution_id] = where
        except Exception:
            # Written on a timer, where nobody else would hear of it.
            logger.exception("recording the agents' streamed text failed")

    async def _reconnected(self, ref: ExecutionRef, client: AgentStreamClient) -> None:
        await agent_sync_to_async(events.record_stream_state)(ref.execution_id, True)
        await signals.stream_reconnected.asend(
            Runner, session_id=ref.session_id, execution_id=ref.execution_id, client=client
        )

    # Ownership ------------------------------------------------------------

    def owns(self, execution_id: int) -> bool:
        """Whether this process holds the execution's stream: its notifications are applied here, in order."""
        return execution_id in self._owned

    async def _supervise(self) -> None:
        """Keep this process's claim on its executions fresh, and adopt abandoned ones.

        Orphans are looked for every second at most, apart from the
        heartbeat: one whose owner died on this machine is adopted as soon
        as that is seen, not once its heartbeat has gone stale.
        """
        interval = settings.KANDEV_OWNER_HEARTBEAT_SECONDS
        loop = asyncio.get_running_loop()
        beaten = -interval
        while True:
            try:
                if loop.time() - beaten >= interval:
                    beaten = loop.time()
                    await agent_sync_to_async(ownership.heartbeat)(PROCESS_ID, list(self._owned))
                orphans = await agent_sync_to_async(ownership.claim_orphans)(PROCESS_ID, stale_after=3 * interval)
                for orphan in orphans:
                    await self._adopt(orphan)
                await self._check_unwatched()
            except Exception:
                logger.exception("supervising agent executions failed; trying again")
            await asyncio.sleep(min(interval, ORPHAN_CHECK_SECONDS))

    async def _adopt(self, orphan: "ownership.Orphan") -> None:
        """Take over an execution whose owning process is gone, and catch up with it."""
        ref = ExecutionRef(orphan.session_id, orphan.execution_id)
        # Nobody holds the stream until this process does: its pages say so meanwhile.
        await agent_sync_to_async(events.record_stream_state)(orphan.execution_id, False)
        followed: SshAgentctl | None = None
        try:
            if orphan.executor is not None:
                assert orphan.pid is not None  # recorded when agentctl started there
                # Over SSH the stream is reached through this process's own tunnel, opened first.
                followed = await self._executor(orphan.executor).attach(
                    orphan.launch_id, orphan.url, orphan.pid, orphan.token
                )
            client = self._stream_client(
                ref, followed.url if followed else orphan.url, orphan.token, after_seq=orphan.applied_seq
            )
            await client.connect()
        except StreamError as error:
            # agentctl went down with its owner, or cannot be adopted (its
            # token refused, frozen): the execution is over, and so must it be.
            logger.warning("cannot adopt the agent execution %s: %s", orphan.execution_id, error)
            _stop_stray_agentctl(orphan)
            unheld = settings.KANDEV_AGENTCTL_UNHELD_TIMEOUT
            await agent_sync_to_async(events.record_agent_exited)(
                orphan.execution_id,
                {"exit_code": None, "signal": None},
                agentctl_gone=True,
                unheld_for=unheld if orphan.unheld_past(parse_duration(unheld)) else "",
            )
            return
        self._owned[orphan.execution_id] = client
        # Its owning stream carries this process's requests from now on.
        await self._kept.drop(orphan.execution_id)
        logger.info("adopted the agent execution %s", orphan.execution_id)
        if followed is not None:
            self._processes[orphan.execution_id] = followed
            asyncio.get_running_loop().create_task(self._watch(orphan.execution_id, followed))
        else:
            self._unwatched[orphan.execution_id] = orphan.url
        await self._reconnected(ref, client)

    async def _check_unwatched(self) -> None:
        """End adopted executions whose agentctl is gone: its port refuses connections.

        A frozen agentctl or an unreachable host does not refuse, so those
        stay up (and their stream keeps reconnecting); only a closed port ends them.
        """
        for execution_id, url in list(self._unwatched.items()):
            client = self._owned.get(execution_id)
            if client is None:
                del self._unwatched[execution_id]
            elif not client.connected and await _refuses_connections(url):
                del self._unwatched[execution_id]
                await agent_sync_to_async(events.record_agent_exited)(
                    execution_id, {"exit_code": None, "signal": None}, agentctl_gone=True
                )
                await self._stop_process(execution_id)

    async def _watch(self, execution_id: int, process: AgentctlProcess | SshAgentctl) -> None:
        """When agentctl itself ends (killed, crashed, shut down), so does the execution."""
        code = await process.wait()
        client = self._owned.get(execution_id)
        if client is not None:
            # What it said last (agent.exited, with the agent's stderr) tells
            # the operator more than its exit code: apply it first.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(client.wait_disconnected(), 5.0)
        await self._text.flush(execution_id)
        await agent_sync_to_async(events.record_agent_exited)(
            execution_id, {"exit_code": code, "signal": None}, agentctl_gone=True
        )
        await self._stop_process(execution_id)

    async def _stop_process(self, execution_id: int) -> None:
        client = self._owned.pop(execution_id, None)
        if client is not None:
            await client.close()
        await self._text.flush(execution_id)
        self._refs.pop(execution_id, None)
        self._streamed.pop(execution_id, None)
        process = self._processes.pop(execution_id, None)
        if process is not None:
            await process.stop()

    async def shutdown(self, endpoint: Endpoint) -> None:
        try:
            await self.request(endpoint, "agent.shutdown", {}, timeout=10)
        except (StreamError, TimeoutError):
            # agentctl is already gone; make sure the process is too.
            await self._stop_process(endpoint.execution_id)


def _stop_stray_agentctl(orphan: "ownership.Orphan") -> None:
    """End an orphan's agentctl that runs on this machine but cannot be adopted, lest it run for ever.

    Only when the pid is still an agentctl: after a restart it may be anything else.
    """
    previous_host = orphan.previous_owner.split(":", 1)[0]
    if orphan.executor is not None or orphan.pid is None or previous_host != socket.gethostname():
        return
    try:
        process = psutil.Process(orphan.pid)
        if any("agentctl" in part for part in process.cmdline()):
            process.terminate()  # agentctl's SIGTERM is agent.shutdown: it stops the agent too
            logger.info("stopped the agentctl of the execution %s, which could not be adopted", orphan.execution_id)
    except psutil.Error:
        return


async def _refuses_connections(url: str) -> bool:
    parts = urlsplit(url)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port), 2.0)
    except ConnectionRefusedError:
        return True
    except (OSError, TimeoutError):
        return False
    writer.close()
    return False


runner = Runner()
