"""The one way out (kandev_web/outgoing.py), over real sockets on 127.0.0.1: which addresses it refuses before
connecting, that it never follows a redirect, that a dripping receiver is cut at the deadline, that one slow
destination does not hold up another, and that a worker's passes may overlap."""

import asyncio
import ipaddress
import socket
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web import outgoing
from testing_support.fakes import DripReceiver, Listener, Receiver, RedirectingReceiver

# Blocks no receiver of ours may be in: loopback, private, shared (CGNAT), link-local (cloud metadata),
# "this network", multicast, reserved, broadcast, and IPv6's loopback, unspecified, unique-local,
# link-local, site-local, multicast, documentation and discard-only blocks.
NOT_PUBLIC = [
    "127.0.0.0/8",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "169.254.0.0/16",
    "0.0.0.0/8",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "192.0.2.0/24",
    "::1/128",
    "::/128",
    "fc00::/7",
    "fe80::/10",
    "fec0::/10",
    "ff00::/8",
    "2001:db8::/32",
    "100::/64",
]


@st.composite
def address_in(draw, networks):
    network = ipaddress.ip_network(draw(st.sampled_from(networks)))
    return network[draw(st.integers(0, network.num_addresses - 1))]


@given(address_in(NOT_PUBLIC))
def test_no_loopback_private_link_local_multicast_or_reserved_address_is_public(address):
    assert not outgoing.is_public(address)


@given(address_in([n for n in NOT_PUBLIC if ":" not in n]))
def test_an_ipv4_address_hidden_in_ipv6_is_as_refused_as_itself(address):
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80))
    assert not outgoing.is_public(mapped)
    assert not outgoing.is_public(sixtofour)


@given(st.integers(0, 2**32 - 1))
def test_an_ipv4_mapped_address_is_public_exactly_when_its_ipv4_address_is(number):
    address = ipaddress.IPv4Address(number)
    assert outgoing.is_public(ipaddress.IPv6Address(f"::ffff:{address}")) == outgoing.is_public(address)


@pytest.mark.parametrize("text", ["8.8.8.8", "1.1.1.1", "142.250.74.110", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
def test_public_addresses_are_public(text):
    assert outgoing.is_public(outgoing.parse_address(text))


def test_a_scoped_ipv6_address_from_getaddrinfo_is_read_without_its_scope():
    assert outgoing.parse_address("fe80::1%eth0") == ipaddress.IPv6Address("fe80::1")


# -- over sockets ----------------------------------------------------------------------------------


@pytest.fixture
def listener():
    listener = Listener()
    yield listener
    listener.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]", "127.1"])
def test_a_loopback_destination_is_refused_without_connecting(listener, settings, host):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = False
    outcome = outgoing.post(f"http://{host}:{listener.port}/hook", b"{}", {}, 2.0)
    assert outcome == outgoing.Outcome("refused", None, "refused: not a public address")
    assert not listener.was_reached()


def test_a_name_that_turns_into_loopback_after_the_check_never_reaches_loopback(listener, settings, monkeypatch):
    """DNS rebinding: the first answer is public (the check passes), every later one is 127.0.0.1."""
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = False
    real = socket.getaddrinfo
    answers = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        address = "8.8.8.8" if not answers else "127.0.0.1"
        answers.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    outcome = outgoing.post(f"http://rebind.example:{listener.port}/hook", b"{}", {}, 1.0)
    assert answers == ["8.8.8.8"]  # looked up once: the address checked is the address connected to
    assert outcome.kind in {"timeout", "failed"}  # 8.8.8.8 does not serve that port
    assert not listener.was_reached()


def test_the_setting_lets_a_development_deployment_reach_this_machine(settings):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = True
    receiver = Receiver()
    try:
        assert outgoing.post(receiver.url, b"{}", {}, 2.0).ok
        assert len(receiver.received) == 1
    finally:
        receiver.close()


def test_a_redirect_is_not_followed_and_counts_as_a_failure(settings):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = True
    target = Receiver()
    redirecting = RedirectingReceiver(to=target.url)
    try:
        outcome = outgoing.post(redirecting.origin + "/hook", b"{}", {}, 2.0)
        with outgoing.session(2.0) as session:  # as pywebpush uses it: a plain post, redirects allowed by default
            answered = session.post(redirecting.origin + "/hook", data=b"{}")
    finally:
        redirecting.close()
        target.close()
    assert outcome == outgoing.Outcome("redirect", 307, "HTTP 307: a redirect, not followed")
    assert answered.status_code == 307
    assert len(redirecting.received) == 2
    assert target.received == []


def test_a_dripping_receiver_is_cut_at_the_deadline(settings):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = True
    drip = DripReceiver(interval=0.25)
    try:
        started = time.monotonic()
        outcome = outgoing.post(drip.url, b"{}", {}, 1.0)
        took = time.monotonic() - started
        assert drip.cut.wait(5)  # it saw the client hang up before its answer was out
    finally:
        drip.close()
    assert outcome == outgoing.Outcome("timeout", None, "timed out after 1 s")
    assert not drip.finished.is_set()
    assert took < drip.seconds / 2  # a read timeout of 1 s alone would have waited for every byte


def test_a_name_lookup_that_never_ends_is_cut_at_the_deadline_too(settings, monkeypatch):
    """getaddrinfo takes no timeout: a resolver that hangs must not hold a delivery past its deadline."""
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = True
    resolver_answers = threading.Event()
    looked_up = socket.getaddrinfo

    def hanging_resolver(*args, **kwargs):
        resolver_answers.wait(10)
        return looked_up(*args, **kwargs)

    monkeypatch.setattr(outgoing.socket, "getaddrinfo", hanging_resolver)
    try:
        started = time.monotonic()
        outcome = outgoing.post("http://push.example.com/endpoint", b"{}", {}, 0.5)
        took = time.monotonic() - started
    finally:
        resolver_answers.set()
    assert outcome == outgoing.Outcome("timeout", None, "timed out after 0.5 s")
    assert took < 5  # the resolver hangs for 10


def test_one_dripping_destination_does_not_hold_up_another(settings):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = True
    drip, fast = DripReceiver(interval=0.25), Receiver()
    arrived: dict[str, float] = {}
    jobs = [drip.url, drip.url, fast.url]  # the slow one's first, twice

    def send(url):
        outcome = outgoing.post(url, b"{}", {}, 2.0)
        arrived.setdefault(url, time.time())
        return outcome

    try:
        results = list(outgoing.by_destination(jobs, outgoing.destination, send))
        assert drip.requested.wait(5)
    finally:
        drip.close()
        fast.close()
    assert results[0] == (fast.url, outgoing.Outcome("delivered", 200))  # back first, not after the slow one
    assert arrived[fast.url] < drip.requested_at + 1.0  # while the slow one was still dripping
    assert len(fast.received) == 1
    assert [outcome.kind for url, outcome in results[1:]] == ["timeout", "timeout"]


def test_one_destination_is_sent_one_request_at_a_time_in_order():
    seen, lock = [], threading.Lock()

    def send(job):
        with lock:
            seen.append(job)
        return job

    jobs = [("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)]
    results = [job for job, _ in outgoing.by_destination(jobs, lambda job: job[0], send)]
    assert sorted(results) == sorted(jobs)
    assert [job for job in seen if job[0] == "a"] == [("a", 1), ("a", 2), ("a", 3)]


def test_a_workers_passes_overlap_so_a_stuck_pass_holds_up_no_other():
    class Stuck(outgoing.DeliveryWorker):
        def __init__(self):
            super().__init__()
            self.release = threading.Event()
            self.passes = 0
            self.second = threading.Event()

        def poll_seconds(self):
            return 60.0

        def run_once(self):
            self.passes += 1
            if self.passes == 1:
                self.release.wait(10)  # a pass waiting on a slow destination
            else:
                self.second.set()
            return 0

    worker = Stuck()

    async def scenario():
        worker.ensure_started()
        await asyncio.sleep(0.1)
        worker.wake()
        second = await asyncio.to_thread(worker.second.wait, 5)
        worker.release.set()
        return second

    assert asyncio.run(scenario())
