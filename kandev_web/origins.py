"""WebSockets only from the page's own origin: scheme, host and port, not the host alone.

A browser sends any site's cookies with a WebSocket handshake and never
applies the same-origin policy to it, so the Origin header is the only thing
telling the board's own page from a page on another port or scheme of the
same host. Channels' ``AllowedHostsOriginValidator`` compares the host alone;
this compares the whole origin with the one the request itself was made to,
the way Django's CSRF check does for a POST:

- the scheme is the socket's (``wss`` is https), behind a trusted proxy what
  its ``X-Forwarded-Proto`` says (``proxy_headers.py`` makes it the socket's);
  Daphne sets no scheme, so a Daphne serving TLS itself needs its origin in
  ``CSRF_TRUSTED_ORIGINS``;
- the host and port are the Host header's, which must be in ``ALLOWED_HOSTS``
  (its port too, where an entry names one: ``host_ports.py``);
- an origin in ``CSRF_TRUSTED_ORIGINS`` (a proxy that rewrites Host, say) is
  accepted too, ``https://*.example.com`` entries as Django reads them.

A handshake without an Origin is refused: every browser sends one, and a
client that is not a browser has no page to be told apart from.
"""

from typing import NamedTuple
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

from .host_ports import port_allowed

DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int


def parse_origin(value: str) -> Origin | None:
    """``scheme://host[:port]`` of http or https and nothing else, normalised; ``None`` otherwise."""
    if not (value.isascii() and value.isprintable()) or " " in value:
        return None  # urlsplit would quietly drop a tab or a newline
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if (
        scheme not in DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.path
        or parts.query
        or parts.fragment
    ):
        return None
    return Origin(scheme, parts.hostname.lower(), DEFAULT_PORTS[scheme] if port is None else port)


def request_scheme(socket_scheme: str | None, proxy_header: tuple[str, str] | None, headers: dict[str, str]) -> str:
    """http or https, as Django's ``HttpRequest.scheme`` reads a request (``headers`` by lowercase name)."""
    if proxy_header:
        name, secure_value = proxy_header
        value = headers.get(name.removeprefix("HTTP_").replace("_", "-").lower())
        if value is not None:
            return "https" if value.split(",", 1)[0].strip() == secure_value else "http"
    return "https" if socket_scheme == "wss" else "http"


def own_origin(scheme: str, host: str, allowed_hosts: list[str]) -> Origin | None:
    """The origin a request to ``host`` (its Host header) was made to, if that host is allowed."""
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, allowed_hosts):
        return None
    return parse_origin(f"{scheme}://{host}")


def trusted(origin: Origin, trusted_origins: list[str]) -> bool:
    """Whether ``origin`` is one of ``CSRF_TRUSTED_ORIGINS``, where ``https://*.example.com`` means subdomains."""
    for entry in trusted_origins:
        if "*" in entry:
            scheme, _, netloc = entry.partition("://*")
            pattern = parse_origin(f"{scheme}://{netloc.lstrip('.')}")
            if (
                pattern is not None
                and (origin.scheme, origin.port) == (pattern.scheme, pattern.port)
                and is_same_domain(origin.host, "." + pattern.host)
            ):
                return True
        elif parse_origin(entry) == origin:
            return True
    return False


def origin_allowed(
    origin: str | None, *, scheme: str, host: str | None, allowed_hosts: list[str], trusted_origins: list[str]
) -> bool:
    """Whether a handshake with this Origin header may proceed (see the module's docstring)."""
    parsed = parse_origin(origin) if origin else None
    if parsed is None:
        return False
    if trusted(parsed, trusted_origins):
        return True
    return host is not None and own_origin(scheme, host, allowed_hosts) == parsed


class SameOriginValidator:
    """ASGI middleware refusing (HTTP 403) a WebSocket handshake from any origin but the page's own."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        headers = {name.decode("latin1").lower(): value.decode("latin1") for name, value in scope.get("headers", [])}
        allowed_hosts = settings.ALLOWED_HOSTS
        if settings.DEBUG and not allowed_hosts:
            allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]  # as Django's get_host() allows
        scheme = request_scheme(scope.get("scheme"), settings.SECURE_PROXY_SSL_HEADER, headers)
        allowed = origin_allowed(
            headers.get("origin"),
            scheme=scheme,
            host=headers.get("host"),
            allowed_hosts=allowed_hosts,
            trusted_origins=settings.CSRF_TRUSTED_ORIGINS,
        )
        if (
            allowed
            and headers.get("host")
            and not port_allowed(headers["host"], scheme, settings.KANDEV_ALLOWED_HOST_RULES)
        ):
            allowed = False
        if not allowed:
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
