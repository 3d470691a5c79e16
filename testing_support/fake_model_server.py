"""What every scripted model API of the tests shares: a loopback HTTP server in a thread, SSE, a denying proxy.

The fakes of real agents' model APIs (the Anthropic Messages API for the
Claude bridge, OpenAI's Chat Completions for Kimi Code, ...) each script one
conversation; the plumbing under them is the same and lives here:

- :class:`BackgroundServer`: a ``ThreadingHTTPServer`` on 127.0.0.1 served from a
  thread while in use (a context manager), so the test's event loop never blocks;
- :class:`QuietServer`: such a server that does not print the connection resets
  of an agent killed mid keep-alive;
- :class:`JsonHandler`: reading a request's JSON body and sending JSON, SSE or errors;
- :func:`sse_stream`: ``event:``/``data:`` frames as the APIs stream them;
- :class:`DenyingProxy`: the ``HTTP(S)_PROXY`` that refuses everything, so
  whatever escapes ``NO_PROXY=127.0.0.1,localhost`` is refused and recorded.

Only the standard library.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class BackgroundServer:
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


def sse_stream(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: ``(event name or None, data)`` pairs; data that is not a str is sent as JSON."""
    frames = []
    for event, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        frames.append((f"event: {event}\n" if event else "") + f"data: {text}\n\n")
    return "".join(frames).encode()


class JsonHandler(BaseHTTPRequestHandler):
    """A handler that records instead of logging, reads JSON bodies and answers whole responses."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # `format`: the base class's name
        pass  # the fakes record their exchanges instead

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def read_json(self) -> Any:
        """The request's body as JSON, or None when it is empty or no JSON."""
        raw = self.read_body()
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def send_json(self, status: int, body: Any) -> None:
        self.send(status, json.dumps(body).encode(), "application/json")

    def send(self, status: int, body: bytes, content_type: str, *, head: bool = False, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if not head:
            self.wfile.write(body)
            self.wfile.flush()


class DenyingProxy(BackgroundServer):
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


def proxy_env(proxy: DenyingProxy) -> dict[str, str]:
    """An agent's proxy variables: everything through ``proxy`` but loopback, both spellings."""
    return {
        "HTTP_PROXY": proxy.url,
        "HTTPS_PROXY": proxy.url,
        "http_proxy": proxy.url,
        "https_proxy": proxy.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


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
