"""Kandev's MCP endpoint: the ``ask_user_question_kandev`` tool, over streamable HTTP.

Served by the ``mcp`` SDK inside the same ASGI application as Django: the
SDK's Starlette app handles ``/mcp/`` in stateless mode, with responses as
server-sent events so progress keepalives can flow while the tool waits. The
SDK's session manager needs a running task group, which Daphne's lack of ASGI
lifespan events cannot start, so :class:`McpEndpoint` starts it on the first
request and keeps it for the life of the process.

Every request must carry ``Authorization: Bearer <token>`` with the token a
task session handed its agent in ``session/new``; anything else is a 401
before the SDK sees it. The tool reads the same header to know whose session
asks.
"""

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.utils.translation import gettext as _
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

from kandev_web.db import database_sync_to_async
from kandev_web.sessions.mcp_tokens import MCP_PATH as PATH
from kandev_web.sessions.mcp_tokens import MCP_SERVER_NAME as SERVER_NAME
from kandev_web.sessions.mcp_tokens import session_for_token
from kandev_web.storable import storable

from . import services
from .validation import InvalidBundle, parse_answers, parse_bundle, tool_result

if TYPE_CHECKING:
    from starlette.applications import Starlette

logger = logging.getLogger(__name__)

TOOL_NAME = "ask_user_question_kandev"
KEEPALIVE_MESSAGE = "Waiting for your response in Kandev"

TOOL_DESCRIPTION = (
    "Ask the human operator one to four multiple-choice questions and wait for the answer. "
    "Each question has an optional id, a title of at most 12 characters, a prompt, and 2-6 options "
    "with a label and a description; the operator may also type their own answer or skip. "
    "Returns the answers keyed by question id."
)

server = MCPServer(name=SERVER_NAME, instructions="Tools for asking the Kandev operator.")


def bearer_token(headers) -> str:
    value = (headers or {}).get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


@server.tool(name=TOOL_NAME, description=TOOL_DESCRIPTION)
async def ask_user_question_kandev(questions: list[Any], ctx: Context, context: str = "") -> dict[str, Any]:
    session = await database_sync_to_async(session_for_token)(bearer_token(ctx.headers))
    if session is None:
        raise ToolError("unknown or expired session token")
    # The agent's text, bound for the question's record and timeline: a NUL or a
    # lone surrogate would be a database error instead of a question.
    questions, context = storable([questions, context or ""])
    try:
        bundle = parse_bundle(questions)
    except InvalidBundle as invalid:
        raise ToolError("; ".join(invalid.errors)) from None
    record, _ = await database_sync_to_async(services.request_clarification)(session, bundle, context)

    async def keepalive() -> None:
        await ctx.report_progress(0, None, KEEPALIVE_MESSAGE)

    try:
        answered = await services.wait_for_answer(record.pending_id, keepalive=keepalive)
    except services.ClarificationCancelled:
        raise ToolError(f"clarification cancelled (agent moved on): {record.pending_id}") from None
    except services.ClarificationTimedOut:
        raise ToolError("clarification request timed out") from None
    response = answered.response or {}
    answers = () if response.get("rejected") else parse_answers(bundle, response.get("answers", []))
    return tool_result(bundle, answers, bool(response.get("rejected")), response.get("reject_reason", ""))


def _transport_security() -> TransportSecuritySettings:
    hosts = [h for h in settings.ALLOWED_HOSTS if h != "*"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection="*" not in settings.ALLOWED_HOSTS,
        allowed_hosts=[pattern for host in hosts for pattern in (host, f"{host}:*")],
        allowed_origins=[
            f"{scheme}://{host}{port}" for host in hosts for scheme in ("http", "https") for port in ("", ":*")
        ],
    )


class McpEndpoint:
    """ASGI app for ``/mcp/``: token check, then the SDK."""

    def __init__(self) -> None:
        self._app: Starlette | None = None
        self._ready: asyncio.Event | None = None

    async def _running_app(self) -> "Starlette":
        """The SDK's app, its session manager started on the first call."""
        if self._ready is None:
            self._ready = asyncio.Event()
            self._app = server.streamable_http_app(
                streamable_http_path=PATH, stateless_http=True, transport_security=_transport_security()
            )
            asyncio.get_running_loop().create_task(self._run(self._ready), name="mcp session manager")
        await self._ready.wait()
        assert self._app is not None
        return self._app

    async def _run(self, ready: asyncio.Event) -> None:
        async with server.session_manager.run():
            ready.set()
            await asyncio.Event().wait()

    async def __call__(self, scope, receive, send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        session = await database_sync_to_async(session_for_token)(bearer_token(headers))
        if session is None:
            await _unauthorized(send)
            return
        app = await self._running_app()
        await _until_session_ends(lambda tracked_send: app(scope, receive, tracked_send), send, bearer_token(headers))


async def _until_session_ends(serve, send, token: str) -> None:
    """Serve the request, but end its response once the token's session has stopped.

    A ``GET /mcp/`` opens a stream with no end of its own: without this, an
    agent (or whoever holds its token) kept it open long after its session was
    stopped and its token revoked. The token is checked again every
    ``KANDEV_LIVE_ACCESS_RECHECK_SECONDS``, as live pages' sockets check access,
    so a stop on any web process is seen.
    """
    state = {"started": False, "ended": False}

    async def tracked_send(message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            state["ended"] = True
        await send(message)

    task = asyncio.ensure_future(serve(tracked_send))
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=settings.KANDEV_LIVE_ACCESS_RECHECK_SECONDS)
            if not task.done() and await database_sync_to_async(session_for_token)(token) is None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                if not state["started"]:
                    await _unauthorized(send)
                elif not state["ended"]:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
        task.result()
    finally:
        if not task.done():
            task.cancel()


async def _unauthorized(send) -> None:
    body = json.dumps({"error": _("A valid session token is required.")}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="kandev-mcp"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


endpoint = McpEndpoint()
