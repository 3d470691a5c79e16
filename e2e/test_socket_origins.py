"""Live sockets open only from the page's own origin, on a real Daphne (kandev_web/origins.py).

Cookies are not kept apart by port or scheme, so a page on another port of
the same host used to read a board's live stream with the operator's cookie.
The browser case is that page exactly; the others are handshakes with a chosen
Origin, which only a non-browser client can send.
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from testing_support.browser import login
from testing_support.processes import free_port

TRUSTED = "https://kandev.example.test"
SERVER_ENV = {"CSRF_TRUSTED_ORIGINS": TRUSTED}

#: Another site's page: it opens the board's socket and says what came of it.
SNOOP = """<!doctype html><title>elsewhere</title><script>
const socket = new WebSocket(%r);
socket.onmessage = () => { document.body.dataset.outcome = "read"; };
socket.onclose = () => { document.body.dataset.outcome ||= "refused"; };
</script>"""


@pytest.fixture(scope="module")
def operator(server):
    return server.create_operator("watcher", workspace="Watched", tasks=True)


@pytest.fixture(scope="module")
def cookie(server, operator):
    """The operator's session cookie, from the login form."""
    return server.session_cookie("watcher")


def board_socket(server, operator) -> str:
    return server.url.replace("http://", "ws://", 1) + f"/ws/boards/{operator['board_id']}/"


def handshake(server, operator, cookie, origin: str | None) -> int:
    """101 when the socket opened (its first frame, the catch-up, read), else the HTTP status of the refusal."""
    headers = {"Cookie": cookie}
    try:
        with connect(
            board_socket(server, operator), origin=origin, additional_headers=headers, proxy=None, open_timeout=20
        ) as socket:
            socket.recv(timeout=20)
            return 101
    except InvalidStatus as refusal:
        return refusal.response.status_code


@pytest.fixture
def elsewhere(server, operator):
    """Another site on this host: an HTTP server on another port serving the snooping page."""
    body = (SNOOP % board_socket(server, operator)).encode()

    class Snoop(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Snoop)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{site.server_address[1]}/"
    site.shutdown()
    site.server_close()


def test_a_page_on_another_port_of_the_same_host_cannot_read_the_board(browser, server, operator, elsewhere):
    page = browser.new_context().new_page()
    login(page, server, "watcher", f"/boards/{operator['board_id']}/")
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")
    page.goto(elsewhere)
    expect(page.locator("body")).to_have_attribute("data-outcome", "refused")


def test_the_pages_own_origin_is_accepted(server, operator, cookie):
    assert handshake(server, operator, cookie, server.url) == 101


@pytest.mark.parametrize(
    "origin",
    [
        lambda server: f"http://127.0.0.1:{free_port()}",
        lambda server: server.url.replace("http://", "https://", 1),
        lambda server: server.url.replace("127.0.0.1", "localhost", 1),
        lambda server: "null",
        lambda server: None,
    ],
    ids=["other-port", "other-scheme", "other-host", "null", "missing"],
)
def test_any_other_origin_is_refused(server, operator, cookie, origin):
    assert handshake(server, operator, cookie, origin(server)) == 403


def test_an_origin_in_csrf_trusted_origins_is_accepted(server, operator, cookie):
    """A proxy in front (TLS, its own host name) is trusted the way Django's CSRF check trusts it."""
    assert handshake(server, operator, cookie, TRUSTED) == 101
    assert handshake(server, operator, cookie, TRUSTED.replace("https", "http")) == 403
