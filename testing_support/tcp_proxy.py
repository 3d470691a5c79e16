"""A TCP proxy on 127.0.0.1 that a test can cut off: the network between a browser and the server.

``cut()`` drops every connection through it and closes each new one as soon
as it arrives, as a sleeping laptop or a dead Wi-Fi link looks to a browser;
``restore()`` lets connections through again. Threads, not asyncio: sync
Playwright owns the test's event loop.
"""

import socket
import socketserver
import threading
from contextlib import suppress


class TcpProxy:
    def __init__(self, upstream_port: int):
        self.upstream = ("127.0.0.1", upstream_port)
        self._lock = threading.Condition()
        self._connections: set[socket.socket] = set()
        self._cut = False
        self.refused = 0
        self._server = _Server(self)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, name="tcp-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            for connection in self._connections:
                with suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._connections.clear()

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def wait_for_refused(self, count: int, timeout: float) -> None:
        """Until ``count`` connections in all have been turned away while cut (a browser retrying)."""
        with self._lock:
            if not self._lock.wait_for(lambda: self.refused >= count, timeout):
                raise TimeoutError(f"{self.refused} of {count} connections tried within {timeout} s")

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.cut()

    def _admit(self, downstream: socket.socket) -> socket.socket | None:
        """The upstream connection for a new ``downstream`` one, or None when cut off."""
        with self._lock:
            if self._cut:
                self.refused += 1
                self._lock.notify_all()
                return None
        upstream = socket.create_connection(self.upstream)
        with self._lock:
            if self._cut:
                upstream.close()
                return None
            self._connections |= {downstream, upstream}
        return upstream

    def _forget(self, *connections: socket.socket) -> None:
        with self._lock:
            self._connections.difference_update(connections)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, proxy: TcpProxy):
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Pipe)


class _Pipe(socketserver.BaseRequestHandler):
    """One connection: bytes both ways until either side (or ``cut()``) ends it."""

    def handle(self):
        proxy: TcpProxy = self.server.proxy
        upstream = proxy._admit(self.request)
        if upstream is None:
            return
        back = threading.Thread(target=_pump, args=(upstream, self.request), daemon=True)
        back.start()
        _pump(self.request, upstream)
        back.join()
        proxy._forget(self.request, upstream)
        upstream.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    # Either side ending ends the connection, the way a proxy's would.
    for each in (source, sink):
        with suppress(OSError):
            each.shutdown(socket.SHUT_RDWR)
