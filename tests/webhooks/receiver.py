"""A webhook receiver on a free local port, as a chat tool's would be: it verifies what it gets."""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kandev_web.webhooks import signing


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def payload(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each POST with the next of ``statuses`` (the last one again once they run out);
    a status of 0 means: say nothing for ``stall`` seconds, like a receiver that hangs."""

    statuses: list[int] = field(default_factory=lambda: [200])
    stall: float = 3.0
    received: list[Received] = field(default_factory=list)

    def __post_init__(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(Received(dict(self.headers.items()), body))
                status = receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                if status == 0:
                    time.sleep(receiver.stall)
                    status = 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook?token=abc"

    def verified(self, secret: str) -> list[dict]:
        """Every payload received, after checking each one's signature as a receiver must."""
        now = int(time.time())
        for item in self.received:
            assert signing.verify(secret, item.body, item.headers[signing.HEADER], now=now), item.headers
            assert item.headers["X-Kandev-Delivery"] == item.payload["delivery"]
            assert item.headers["X-Kandev-Event"] == item.payload["event"]
            assert item.headers["Content-Type"] == "application/json"
        return [item.payload for item in self.received]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
