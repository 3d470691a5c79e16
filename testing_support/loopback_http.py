"""Loopback HTTP servers of a test's own: the base the scripted model APIs share, and a refusing proxy.

The fakes of the Anthropic Messages API (``testing_support.bridge``) and of
the OpenAI Responses API (``testing_support.codex``) serve from a thread
beside the test's event loop, with the standard library only; a
``DenyingProxy`` set as ``HTTP(S)_PROXY`` catches whatever an agent tries to
send anywhere else.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class Background:
    """A loopback HTTP server of the test's own, served from a thread while in use."""

    _server: ThreadingHTTPServer
    _thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The agent is killed at the end of every run, mid keep-alive: not news.
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            super().handle_error(request, client_address)


class DenyingProxy(Background):
    """A loopback HTTP(S) proxy that answers 403 to everything and remembers what was tried.

    Set as ``HTTP(S)_PROXY``: anything that escapes ``NO_PROXY=127.0.0.1,localhost``
    (telemetry, update checks, the real API) is refused here instead of
    reaching the network.
    """

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _DenyHandler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="denying proxy", daemon=True)

    def record(self, attempt: str) -> None:
        with self._lock:
            self.attempts.append(attempt)


class _ProxyServer(QuietServer):
    proxy: DenyingProxy


class _DenyHandler(BaseHTTPRequestHandler):
    server: _ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        # BaseHTTPRequestHandler dispatches to do_<METHOD>: refuse every method.
        if name.startswith("do_"):
            return self._deny
        raise AttributeError(name)

    def _deny(self) -> None:
        self.server.proxy.record(f"{self.command} {self.path}")
        body = b"refused by the test's proxy\n"
        self.send_response(403)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.close_connection = True
