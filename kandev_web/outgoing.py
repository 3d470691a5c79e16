"""The one way out: every HTTP request the server itself makes (Web Push, webhooks) goes through here.

A URL an operator gave us (a push endpoint, a webhook) must not make the
server reach what only the server can reach: its own loopback services, the
cloud's metadata address, the private network. So this client

- resolves the host itself, refuses the request when any address it resolves
  to is not public (loopback, private, link-local, shared, multicast,
  unspecified, reserved; IPv4 and IPv6, and IPv4 inside IPv6), and connects
  to the very addresses it checked: no second lookup an attacker's DNS could
  answer differently. The Host header and TLS SNI still name the host.
  ``KANDEV_OUTGOING_ALLOW_PRIVATE`` lifts the address check (on in ``dev``
  and ``e2e``, where receivers run on this machine);
- never follows a redirect: a 3xx is the answer, and the caller treats it as
  a failure (following it would resend a signed body, or a POST turned into
  a GET, to wherever the receiver says);
- gives each request a total deadline: a receiver that sends a byte a second
  keeps a read timeout happy forever, so a watchdog shuts the socket down
  when the deadline passes, whatever the request is doing (and a name
  lookup, which takes no timeout, is waited for only until the deadline);
- uses no proxy from the environment (a proxy would make the address check
  meaningless) and no connection pooling between requests, so every request
  is a fresh connection made and checked by this module.

:func:`by_destination` runs many requests so that one slow destination
cannot hold up another's: each destination's requests run one after the
other in a thread of their own, destinations side by side.
:class:`DeliveryWorker` lets a background worker's passes overlap, so a pass
stuck on a slow destination does not hold up the next pass's deliveries.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection

from kandev_web.background import Worker

logger = logging.getLogger(__name__)

#: How many destinations one batch sends to at once; more wait for a free thread (each request
#: ends by its deadline, so the wait is bounded).
DESTINATIONS_AT_ONCE = 16


# -- which addresses are public -------------------------------------------------------------------

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_public(address: Address) -> bool:
    """Whether ``address`` is one anyone on the internet can reach: the only kind we send to by default.

    An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, Teredo) is
    as public as the IPv4 address it carries, and must itself be global too.
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = [address.ipv4_mapped, address.sixtofour]
        if address.teredo is not None:
            embedded.append(address.teredo[1])
        if any(inner is not None and not is_public(inner) for inner in embedded):
            return False
        if address.ipv4_mapped is not None:
            return True  # ::ffff:0:0/96 is "private" as a block, but it is the IPv4 address it carries
        if address.is_site_local:  # fec0::/10, deprecated, still routed inside some networks
            return False
    return not (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
        or not address.is_global
    )


def parse_address(text: str) -> Address:
    """An address as ``getaddrinfo`` gives it (an IPv6 one may carry a ``%scope``)."""
    return ipaddress.ip_address(text.split("%", 1)[0])


# -- what came of a request -------------------------------------------------------------------------


class Refused(Exception):
    """The destination resolves to an address this deployment does not send to; nothing was sent."""


@dataclass(frozen=True)
class Outcome:
    """What came of one request, as a delivery log and a metric say it.

    ``kind`` is a bounded set (a metric's label): ``delivered`` (a 2xx),
    ``http_error`` (another status), ``redirect`` (a 3xx, not followed),
    ``refused`` (not a public address; nothing sent), ``timeout`` (the
    deadline passed) or ``failed`` (no answer: the name did not resolve, the
    connection could not be made or broke). ``error`` is one line for the
    log that names no address, port or connection detail, so the log cannot
    be used to probe what the server can reach.
    """

    kind: str
    status: int | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "delivered"


def outcome_of_status(status: int) -> Outcome:
    if 200 <= status < 300:
        return Outcome("delivered", status)
    if 300 <= status < 400:
        return Outcome("redirect", status, f"HTTP {status}: a redirect, not followed")
    return Outcome("http_error", status, f"HTTP {status}")


def outcome_of_error(error: BaseException, deadline: float) -> Outcome:
    """The outcome of a request that raised ``error``; nothing of its text is kept."""
    if isinstance(error, Refused):
        return Outcome("refused", None, "refused: not a public address")
    if isinstance(error, requests.Timeout) or _deadline_passed():
        return Outcome("timeout", None, f"timed out after {deadline:g} s")
    return Outcome("failed", None, "failed: no answer")


# -- the guarded connection -------------------------------------------------------------------------


class _Deadline:
    """When the request a thread is making must be over, and the watchdogs armed for it."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.passed = False
        self.watchdogs: list[threading.Timer] = []
        self.spares: list[socket.socket] = []

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())


class _Current(threading.local):
    deadline: _Deadline | None = None


_current = _Current()


def _deadline_passed() -> bool:
    deadline = _current.deadline
    return deadline is not None and deadline.passed


#: Name lookups run here: ``getaddrinfo`` takes no timeout, and a lookup must end by its request's deadline too.
#: One stuck past it goes on in its thread; the request does not wait for it.
_LOOKUPS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kandev outgoing lookup")


def _lookup(host: str, port: int) -> list[tuple[Any, ...]]:
    deadline = _current.deadline
    found = _LOOKUPS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        return found.result(timeout=None if deadline is None else deadline.remaining())
    except TimeoutError:
        if deadline is not None:
            deadline.passed = True
        raise OSError(f"looking {host} up took past the deadline") from None


def _resolve_checked(host: str, port: int) -> list[tuple[Any, ...]]:
    """Every address ``host`` resolves to, all of them public unless the deployment allows otherwise."""
    infos = _lookup(host, port)
    allowed = settings.KANDEV_OUTGOING_ALLOW_PRIVATE
    if not allowed and not (infos and all(is_public(parse_address(str(info[4][0]))) for info in infos)):
        raise Refused
    return infos


def _connect(host: str, port: int, timeout: float | None, socket_options) -> socket.socket:
    """A connection to one of the addresses ``host`` resolved to and was checked for: no second lookup."""
    if not isinstance(timeout, int | float):
        timeout = None  # urllib3's "no timeout given" marker: the deadline still bounds it
    last: OSError | None = None
    for family, kind, proto, _name, address in _resolve_checked(host, port):
        sock = socket.socket(family, kind, proto)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
            remaining = None if _current.deadline is None else max(0.01, _current.deadline.remaining())
            limits = [value for value in (timeout, remaining) if value is not None]
            sock.settimeout(min(limits) if limits else None)
            sock.connect(address)
            sock.settimeout(timeout)
        except OSError as error:
            sock.close()
            last = error
            continue
        _arm_watchdog(sock)
        return sock
    raise last or OSError("no address to connect to")


def _arm_watchdog(sock: socket.socket) -> None:
    """Shut ``sock`` down when the request's deadline passes, whatever is reading or writing it then.

    A duplicate descriptor is kept for it: TLS wraps (and takes over) the
    original, and shutting down any descriptor of a socket ends the connection.
    """
    deadline = _current.deadline
    if deadline is None:
        return
    spare = sock.dup()

    def cut() -> None:
        deadline.passed = True
        with contextlib.suppress(OSError):
            spare.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(deadline.remaining(), cut)
    timer.daemon = True
    deadline.watchdogs.append(timer)
    deadline.spares.append(spare)
    timer.start()


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _connect(self._dns_host, self.port, self.timeout, self.socket_options)


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _connect(self._dns_host, self.port, self.timeout, self.socket_options)


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, connections, maxsize, block=False, **pool_kwargs):
        self.poolmanager = PoolManager(num_pools=connections, maxsize=maxsize, block=block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        raise Refused  # never reached: the session trusts no proxy settings


class _Session(requests.Session):
    """requests, with the guarded connections, no proxies from the environment and no redirects."""

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        self.max_redirects = 0
        adapter = _GuardedAdapter(max_retries=0)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def get_redirect_target(self, resp):
        return None  # the 3xx itself is the answer


@contextlib.contextmanager
def session(deadline: float) -> Iterator[requests.Session]:
    """A requests session for one request (or a few) that must all be over within ``deadline`` seconds.

    For a library that takes a session (pywebpush); call it from one thread.
    """
    if _current.deadline is not None:
        raise RuntimeError("one outgoing request at a time per thread")
    armed = _current.deadline = _Deadline(deadline)
    guarded = _Session()
    try:
        yield guarded
    finally:
        _current.deadline = None
        guarded.close()
        for timer in armed.watchdogs:
            timer.cancel()
        for spare in armed.spares:
            spare.close()


def post(url: str, body: bytes, headers: dict[str, str], deadline: float) -> Outcome:
    """POST ``body`` to ``url``, all over within ``deadline`` seconds; the answer's body is not read."""
    with session(deadline) as guarded:
        try:
            response = guarded.post(
                url, data=body, headers=headers, timeout=deadline, stream=True, allow_redirects=False
            )
            response.close()
        except Exception as error:
            return outcome_of_error(error, deadline)
        return outcome_of_status(response.status_code)


# -- one destination cannot hold up another --------------------------------------------------------


def destination(url: str) -> str:
    """Where a request goes, as far as taking turns is concerned: scheme, host and port."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port or ''}"


def by_destination[T, R](
    jobs: Iterable[T], where: Callable[[T], str], send: Callable[[T], R], *, at_once: int = DESTINATIONS_AT_ONCE
) -> Iterator[tuple[T, R]]:
    """``send`` every job; each result as soon as it is there, in the calling thread.

    One destination's jobs run one after the other (a receiver is not sent
    several at once), different destinations' side by side: a slow one
    delays only its own. ``send`` must not touch the database (it runs in a
    pool thread); the caller records what the results say.
    """
    groups: dict[str, list[T]] = {}
    for job in jobs:
        groups.setdefault(where(job), []).append(job)
    if not groups:
        return
    results: queue.SimpleQueue[tuple[T, R | None, BaseException | None]] = queue.SimpleQueue()

    def run(group: list[T]) -> None:
        for job in group:
            try:
                results.put((job, send(job), None))
            except BaseException as error:  # handed to the calling thread, raised there
                results.put((job, None, error))

    total = sum(len(group) for group in groups.values())
    with ThreadPoolExecutor(max_workers=min(at_once, len(groups)), thread_name_prefix="kandev-outgoing") as pool:
        for group in groups.values():
            pool.submit(run, group)
        for _ in range(total):
            job, result, error = results.get()
            if error is not None:
                raise error
            yield job, result  # type: ignore[misc]


class DeliveryWorker(Worker):
    """A background worker whose passes may overlap, up to :attr:`passes_at_once`.

    A pass that waits on a slow destination (up to its deadline per request)
    would otherwise hold up every delivery queued after it began. Passes
    claim their rows with a conditional UPDATE, so overlapping passes never
    send one row twice.
    """

    passes_at_once = 4

    async def _run(self, wake: asyncio.Event) -> None:
        running: set[asyncio.Future] = set()
        while True:
            if len(running) >= self.passes_at_once:
                await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
            task = asyncio.ensure_future(asyncio.to_thread(self._pass_in_a_thread))
            running.add(task)
            task.add_done_callback(self._pass_done(running))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=self.poll_seconds())
            wake.clear()

    def _pass_done(self, running: set[asyncio.Future]) -> Callable[[asyncio.Future], None]:
        def done(task: asyncio.Future) -> None:
            running.discard(task)
            if not task.cancelled() and task.exception() is not None:
                logger.error("a %s pass failed", self.description, exc_info=task.exception())

        return done
