"""Who a request comes from and over what scheme, believing a proxy's headers only from a trusted proxy.

Behind a reverse proxy (Caddy in ``deploy/``) every connection comes from the
proxy: the client's address and whether it used HTTPS arrive in the proxy's
``X-Forwarded-For`` and ``X-Forwarded-Proto`` headers. Any client can send those
headers too, so they are believed only when the connection itself comes from
an address in ``KANDEV_TRUSTED_PROXIES``. Daphne's own ``--proxy-headers``
believes them from every peer, which is why it is not used and this wrapper is:

- the client address (``scope["client"]``, Django's ``REMOTE_ADDR``, which
  django-axes keys failed logins by) becomes the last address in
  ``X-Forwarded-For`` that is not itself a trusted proxy, so five wrong
  passwords lock one client out, not everyone behind the proxy;
- the scheme (``scope["scheme"]``, which Django's HTTPS redirect, secure
  cookies and the WebSocket origin check read) becomes the proxy's
  ``X-Forwarded-Proto``.

From any other peer both headers are dropped before the application sees
them, so nothing further in can be told a client's word for the proxy's.
Entries are IP addresses, networks (CIDR) or host names; a host name is
resolved when a request needs it, at most every ``RESOLVE_SECONDS`` (a
container's address changes when it is re-created).
"""

import asyncio
import ipaddress
import re
import time
from typing import NamedTuple

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

FORWARDED_FOR = b"x-forwarded-for"
FORWARDED_PROTO = b"x-forwarded-proto"
#: How long a trusted proxy's host name is believed to keep its addresses.
RESOLVE_SECONDS = 30.0
#: A host name as DNS and Docker spell one.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")


class TrustedProxies(NamedTuple):
    networks: tuple[IPNetwork, ...]
    names: tuple[str, ...]


def parse_trusted_proxies(entries: list[str]) -> TrustedProxies:
    """``KANDEV_TRUSTED_PROXIES``'s entries read; ``ValueError`` naming the first that is none of the three."""
    networks: list[IPNetwork] = []
    names: list[str] = []
    for entry in (entry.strip() for entry in entries):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if not _HOST_NAME.match(entry) or entry.replace(".", "").isdigit():
                raise ValueError(f"{entry!r} is no IP address, network or host name") from None
            names.append(entry.lower())
    return TrustedProxies(tuple(networks), tuple(names))


def parse_address(text: str) -> IPAddress | None:
    """An address as a proxy writes one (``[::1]`` and ``1.2.3.4:5678`` too), IPv4-mapped IPv6 as IPv4."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def forwarded_client(forwarded_for: list[str], is_trusted) -> IPAddress | None:
    """The client a chain of trusted proxies reports: the last hop in ``forwarded_for`` that is not one of them.

    ``forwarded_for`` is each ``X-Forwarded-For`` header's value in order; each
    proxy appends the address it was reached from, so everything left of the
    first untrusted hop (reading from the right) is the client's own word.
    ``None`` when the header is missing or a hop is no address.
    """
    hops = [hop for value in forwarded_for for hop in value.split(",")]
    client = None
    for hop in reversed(hops):
        address = parse_address(hop)
        if address is None:
            return client
        client = address
        if not is_trusted(address):
            return address
    return client


def forwarded_scheme(values: list[str], websocket: bool) -> str | None:
    """The scheme the proxy says the client used (the last proxy's word), for an HTTP or WebSocket scope."""
    if not values:
        return None
    proto = values[-1].split(",")[-1].strip().lower()
    if proto not in ("http", "https"):
        return None
    if websocket:
        return "wss" if proto == "https" else "ws"
    return proto


class _Resolver:
    """Trusted proxies' host names to their addresses, looked up again every ``RESOLVE_SECONDS``."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[float, frozenset[IPAddress]]] = {}

    async def addresses(self, name: str) -> frozenset[IPAddress]:
        now = time.monotonic()
        known = self._known.get(name)
        if known is not None and known[0] > now:
            return known[1]
        try:
            found = await asyncio.get_running_loop().getaddrinfo(name, None)
        except OSError:
            found = []  # not (yet) there: asked again a second later, trusted once it resolves
        addresses = frozenset(a for info in found if (a := parse_address(str(info[4][0]))) is not None)
        self._known[name] = (now + (RESOLVE_SECONDS if addresses else 1.0), addresses)
        return addresses


_resolver = _Resolver()


async def _trusted_now(trusted: TrustedProxies) -> frozenset[IPAddress] | None:
    """The trusted host names' current addresses (``None`` when there are no names)."""
    if not trusted.names:
        return None
    found: set[IPAddress] = set()
    for name in trusted.names:
        found |= await _resolver.addresses(name)
    return frozenset(found)


class ForwardedByTrustedProxies:
    """ASGI middleware: the client and scheme from a trusted proxy's headers, those headers dropped from anyone else."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.application(scope, receive, send)
        forwarded_for = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == FORWARDED_FOR]
        forwarded_proto = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == FORWARDED_PROTO]
        if not forwarded_for and not forwarded_proto:
            return await self.application(scope, receive, send)
        scope = dict(scope)
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() not in (FORWARDED_FOR, FORWARDED_PROTO)]
        trusted: TrustedProxies = settings.KANDEV_TRUSTED_PROXIES
        peer = parse_address(str((scope.get("client") or ("",))[0]))
        if peer is None or not (trusted.networks or trusted.names):
            return await self.application(scope, receive, send)
        named = await _trusted_now(trusted)

        def is_trusted(address: IPAddress) -> bool:
            return any(address in network for network in trusted.networks) or (named is not None and address in named)

        if is_trusted(peer):
            client = forwarded_client(forwarded_for, is_trusted)
            if client is not None:
                scope["client"] = (str(client), 0)
            scheme = forwarded_scheme(forwarded_proto, websocket=scope["type"] == "websocket")
            if scheme is not None:
                scope["scheme"] = scheme
        return await self.application(scope, receive, send)


def client_ip(request) -> str | None:
    """django-axes' ``AXES_CLIENT_IP_CALLABLE``: the address :class:`ForwardedByTrustedProxies` settled on.

    Not axes' own ipware lookup, which would read ``X-Forwarded-For`` from any client.
    """
    return request.META.get("REMOTE_ADDR") or None
