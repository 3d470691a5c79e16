"""Which Origin a WebSocket handshake may come from: the page's own scheme, host and port (kandev_web/origins.py).

The rules as pure functions, then the middleware on the ASGI app with the
settings a deployment sets (a TLS proxy, trusted origins); e2e/test_socket_origins.py
opens real sockets on a real Daphne.
"""

import pytest
from django.test import override_settings
from hypothesis import assume, given
from hypothesis import strategies as st

from kandev_web.asgi import application
from kandev_web.host_ports import parse_allowed_hosts
from kandev_web.origins import Origin, origin_allowed, parse_origin, request_scheme
from kandev_web.proxy_headers import parse_trusted_proxies
from testing_support.sockets import Communicator, session_cookie, two_workspaces

ALLOWED = ["127.0.0.1", "localhost", ".example.com"]

hosts = st.sampled_from(["127.0.0.1", "localhost", "example.com", "board.example.com"])
ports = st.integers(min_value=1, max_value=65535)
schemes = st.sampled_from(["http", "https"])


def allowed(origin, *, scheme="http", host="127.0.0.1:8000", trusted=()):
    return origin_allowed(origin, scheme=scheme, host=host, allowed_hosts=ALLOWED, trusted_origins=list(trusted))


def netloc(host: str, port: int, scheme: str) -> str:
    return host if port == {"http": 80, "https": 443}[scheme] else f"{host}:{port}"


@given(scheme=schemes, host=hosts, port=ports)
def test_the_pages_own_origin_is_accepted(scheme, host, port):
    assert allowed(f"{scheme}://{netloc(host, port, scheme)}", scheme=scheme, host=netloc(host, port, scheme))


@given(scheme=schemes, host=hosts, port=ports, other=ports)
def test_another_port_of_the_same_host_is_refused(scheme, host, port, other):
    assume(other != port)
    assert not allowed(f"{scheme}://{host}:{other}", scheme=scheme, host=netloc(host, port, scheme))


@given(host=hosts, port=ports)
def test_another_scheme_of_the_same_host_and_port_is_refused(host, port):
    assert not allowed(f"https://{host}:{port}", scheme="http", host=f"{host}:{port}")
    assert not allowed(f"http://{host}:{port}", scheme="https", host=f"{host}:{port}")


def test_default_ports_are_the_same_origin_written_or_not():
    assert allowed("http://127.0.0.1", host="127.0.0.1:80")
    assert allowed("https://board.example.com:443", scheme="https", host="board.example.com")
    assert not allowed("http://127.0.0.1", host="127.0.0.1:8000")


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "",
        "null",
        "http://evil.example:8000",
        "http://127.0.0.1.evil.example:8000",
        "http://evil.example@127.0.0.1:8000",
        "http://127.0.0.1:8000/",
        "http://127.0.0.1:8000?x",
        "http://127.0.0.1:8000#x",
        " http://127.0.0.1:8000",
        "http://127.0.0.1:8000\t",
        "http://127.0.0.1:99999",
        "ws://127.0.0.1:8000",
        "file://",
        "HTTP://127.0.0.1:8000\n",
    ],
)
def test_anything_but_a_plain_matching_origin_is_refused(origin):
    assert not allowed(origin)


def test_a_host_not_in_allowed_hosts_has_no_origin_of_its_own():
    assert not allowed("http://evil.example:8000", host="evil.example:8000")


def test_a_missing_host_accepts_only_trusted_origins():
    assert not allowed("http://127.0.0.1:8000", host=None)
    assert allowed("https://kandev.example.com", host=None, trusted=["https://kandev.example.com"])


def test_trusted_origins_match_exactly_or_by_subdomain_as_django_reads_them():
    trusted = ["https://kandev.example.com", "https://*.corp.example"]
    assert allowed("https://kandev.example.com", trusted=trusted)
    assert allowed("https://kandev.example.com:443", trusted=trusted)
    assert allowed("https://board.corp.example", trusted=trusted)
    assert allowed("https://corp.example", trusted=trusted)
    assert not allowed("http://kandev.example.com", trusted=trusted)
    assert not allowed("https://kandev.example.com:8443", trusted=trusted)
    assert not allowed("https://evilcorp.example", trusted=trusted)
    assert not allowed("http://board.corp.example", trusted=trusted)


def test_origins_are_compared_case_insensitively():
    assert parse_origin("HTTPS://Board.Example.COM") == Origin("https", "board.example.com", 443)


PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.parametrize(
    ("socket_scheme", "proxy", "headers", "scheme"),
    [
        (None, None, {}, "http"),
        ("ws", None, {}, "http"),
        ("wss", None, {}, "https"),
        ("ws", PROXY, {"x-forwarded-proto": "https"}, "https"),
        ("ws", PROXY, {"x-forwarded-proto": "https, http"}, "https"),
        ("wss", PROXY, {"x-forwarded-proto": "http"}, "http"),
        ("ws", PROXY, {}, "http"),
        # Without SECURE_PROXY_SSL_HEADER the header is anyone's to send.
        ("ws", None, {"x-forwarded-proto": "https"}, "http"),
    ],
)
def test_the_scheme_is_the_sockets_or_the_proxys_as_django_reads_it(socket_scheme, proxy, headers, scheme):
    assert request_scheme(socket_scheme, proxy, headers) == scheme


@given(origin=st.text(), host=st.one_of(st.none(), st.text()), scheme=schemes)
def test_no_header_value_makes_the_check_fail_open_or_raise(origin, host, scheme):
    result = origin_allowed(origin, scheme=scheme, host=host, allowed_hosts=ALLOWED, trusted_origins=[])
    if result:
        assert parse_origin(origin) == parse_origin(f"{scheme}://{host}")


# The middleware on the app, with a deployment's settings.


async def _socket(peer: str = "127.0.0.1"):
    """A connect function for a task socket Alice may watch, with her cookie, from ``peer``: accepted or not."""
    mine, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)

    async def from_peer(scope, receive, send):
        return await application({**scope, "client": (peer, 50000)}, receive, send)

    async def accepted(*headers) -> bool:
        communicator = Communicator(from_peer, f"/ws/tasks/{mine.pk}/", headers=[*headers, cookie])
        connected, _ = await communicator.connect()
        await communicator.disconnect()
        return connected

    return accepted


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@override_settings(
    KANDEV_TRUSTED_PROXIES=parse_trusted_proxies(["127.0.0.1"]),
    KANDEV_ALLOWED_HOST_RULES=parse_allowed_hosts(["kandev.example.com"]),
    ALLOWED_HOSTS=["kandev.example.com"],
)
async def test_behind_a_trusted_tls_proxy_the_https_page_is_accepted_and_an_http_one_refused():
    accepted = await _socket()
    host = (b"host", b"kandev.example.com")
    https = (b"x-forwarded-proto", b"https")
    assert await accepted((b"origin", b"https://kandev.example.com"), host, https)
    assert not await accepted((b"origin", b"http://kandev.example.com"), host, https)
    assert not await accepted((b"origin", b"https://kandev.example.com"), host)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@override_settings(
    KANDEV_TRUSTED_PROXIES=parse_trusted_proxies(["10.0.0.0/8"]),
    KANDEV_ALLOWED_HOST_RULES=parse_allowed_hosts(["kandev.example.com"]),
    ALLOWED_HOSTS=["kandev.example.com"],
)
async def test_a_client_that_is_no_trusted_proxy_cannot_claim_https_for_its_page():
    accepted = await _socket(peer="192.0.2.8")
    host = (b"host", b"kandev.example.com")
    https = (b"x-forwarded-proto", b"https")
    assert not await accepted((b"origin", b"https://kandev.example.com"), host, https)
    assert await accepted((b"origin", b"http://kandev.example.com"), host, https)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@override_settings(
    KANDEV_ALLOWED_HOST_RULES=parse_allowed_hosts(["kandev.example.com:8443"]), ALLOWED_HOSTS=["kandev.example.com"]
)
async def test_a_socket_to_a_port_allowed_hosts_does_not_name_is_refused():
    accepted = await _socket()
    assert await accepted((b"origin", b"http://kandev.example.com:8443"), (b"host", b"kandev.example.com:8443"))
    assert not await accepted((b"origin", b"http://kandev.example.com:9999"), (b"host", b"kandev.example.com:9999"))


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@override_settings(CSRF_TRUSTED_ORIGINS=["https://kandev.example.com"])
async def test_a_proxy_that_rewrites_host_is_covered_by_csrf_trusted_origins():
    accepted = await _socket()
    host = (b"host", b"127.0.0.1:8000")
    assert await accepted((b"origin", b"https://kandev.example.com"), host)
    assert not await accepted((b"origin", b"https://other.example.com"), host)
