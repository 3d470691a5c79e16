"""ASGI entry point: HTTP through Django, WebSockets through Channels.

WebSockets pass the Origin check (the page's own scheme, host and port:
origins.py) and the session auth before any consumer sees them; consumers then
check workspace membership themselves.
"""

import asyncio
import importlib
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev_web.settings")

# The server's event loop shares the GIL with the threads doing its database
# work and rendering (the consumers' thread, the agent runner). A thread that
# wants the GIL waits for a busy one to hand it over, by default up to 5 ms: a
# new question's overlay, queued by the runner, waited that long for the loop
# to send it while the runner rendered the rest of the question.
sys.setswitchinterval(0.0005)

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from .sessions.checks import refuse_unworkable_deployment  # noqa: E402

refuse_unworkable_deployment()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from .live import outbox  # noqa: E402
from .logs import RequestIds  # noqa: E402
from .notifications.push_sender import sender as push_sender  # noqa: E402
from .origins import SameOriginValidator  # noqa: E402
from .proxy_headers import ForwardedByTrustedProxies  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402
from .sessions.mcp_tokens import MCP_PATH  # noqa: E402
from .sessions.runner import runner  # noqa: E402
from .webhooks.sender import sender as webhook_sender  # noqa: E402

#: Imported on an agent's first MCP request, in a thread: the MCP SDK takes most
#: of a second of CPU to import (models of every protocol version it speaks),
#: which a process whose agents never call it need not pay at every start, and
#: the loop serving pages must not stall for.
MCP_MODULE = "kandev_web.clarifications.mcp"


async def http_app(scope, receive, send):
    """The MCP endpoint (agents, bearer token) beside Django (operators, sessions)."""
    if scope["path"] == MCP_PATH:
        mcp = sys.modules.get(MCP_MODULE) or await asyncio.to_thread(importlib.import_module, MCP_MODULE)
        await mcp.endpoint(scope, receive, send)
    else:
        await django_asgi_app(scope, receive, send)


# Outermost: every part below sees the client and scheme a trusted proxy reported, and nobody else's.
router = ForwardedByTrustedProxies(
    RequestIds(
        ProtocolTypeRouter(
            {
                "http": http_app,
                # The stubs' URLRouter wants patterns of ASGI applications, which path() is not typed to make
                # (routing.py).
                "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),  # type: ignore[arg-type]
            }
        )
    )
)


def bind_to_the_server_loop() -> None:
    """Run agent streams, live updates, webhooks and pushes on the loop that serves pages; start supervising agents."""
    runner.ensure_started()
    webhook_sender.ensure_started()
    push_sender.ensure_started()
    outbox.bind(asyncio.get_running_loop())


def start_with_the_server() -> None:
    """Bind as soon as Daphne's loop runs, not at the first request.

    A web process restarted after a crash must adopt the agents its
    predecessor left running (and report what they did meanwhile) even when
    nobody opens a page. Daphne sends no ASGI lifespan events; it runs
    Twisted's asyncio reactor, installed before it imports this module, so a
    call scheduled on the reactor runs inside the server's loop once it starts.
    """
    if "daphne.server" not in sys.modules:
        return  # another server: the first connection binds
    from twisted.internet import reactor

    # Without the zope.interface plugin mypy reads the interface's methods as
    # taking self, so the delay as the callable.
    reactor.callLater(0, bind_to_the_server_loop)  # type: ignore[arg-type]


start_with_the_server()


async def application(scope, receive, send):
    if scope["type"] in ("http", "websocket"):
        # Idempotent; binds here only under a server start_with_the_server() does not know.
        bind_to_the_server_loop()
    await router(scope, receive, send)
