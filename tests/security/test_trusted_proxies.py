"""A proxy's X-Forwarded-For and X-Forwarded-Proto count only from KANDEV_TRUSTED_PROXIES, over a real Daphne.

The test client connects from 127.0.0.1, so with 127.0.0.1 trusted it plays
Caddy, reporting each request's client; with it untrusted it plays a client
reaching Daphne directly and forging the proxy's headers.
"""

import http.client
import ipaddress
import re
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.proxy_headers import forwarded_client, forwarded_scheme, parse_trusted_proxies
from testing_support.deployment import prod_env
from testing_support.processes import PASSWORD, running_server, server_environ

pytestmark = pytest.mark.slow  # started first: see the root conftest.py

FAILURE_LIMIT = 5  # KANDEV_LOGIN_FAILURE_LIMIT's default


def _request(url: str, method: str, path: str, headers: dict[str, str], body: str = "") -> http.client.HTTPResponse:
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    connection.request(method, path, body=body.encode() or None, headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def _log_in(url: str, password: str, forwarded_for: str) -> int:
    """POST the login form as a browser would, through a proxy reporting ``forwarded_for``: the status."""
    proxy = {"X-Forwarded-For": forwarded_for}
    page = _request(url, "GET", "/login/", proxy)
    token = re.search(r"csrftoken=([^;]+)", page.getheader("Set-Cookie", "")).group(1)
    form = urllib.parse.urlencode({"username": "alice", "password": password, "csrfmiddlewaretoken": token})
    headers = {
        **proxy,
        "Cookie": f"csrftoken={token}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return _request(url, "POST", "/login/", headers, form).status


def _alice(server) -> None:
    server.create_operator("alice", workspace="Lockouts")


def test_behind_a_trusted_proxy_one_client_s_wrong_passwords_lock_out_that_client_only(tmp_path, fresh_sqlite):
    # By name, as compose names Caddy: resolved to the address the connection comes from.
    env = server_environ(fresh_sqlite, {"KANDEV_TRUSTED_PROXIES": "localhost"})
    with running_server(env, tmp_path / "server.log") as server:
        _alice(server)
        for _ in range(FAILURE_LIMIT):
            _log_in(server.url, "wrong", forwarded_for="203.0.113.7")
        assert _log_in(server.url, PASSWORD, forwarded_for="203.0.113.7") == 429, "the guessing client is locked out"
        # Alice, elsewhere behind the same proxy, still gets in.
        assert _log_in(server.url, PASSWORD, forwarded_for="198.51.100.9") == 302


def test_a_client_that_is_no_trusted_proxy_cannot_dodge_the_lockout_by_forging_x_forwarded_for(tmp_path, fresh_sqlite):
    env = server_environ(fresh_sqlite, {"KANDEV_TRUSTED_PROXIES": "10.0.0.0/8"})
    with running_server(env, tmp_path / "server.log") as server:
        _alice(server)
        for attempt in range(FAILURE_LIMIT):
            _log_in(server.url, "wrong", forwarded_for=f"203.0.113.{attempt + 1}")
        assert _log_in(server.url, PASSWORD, forwarded_for="198.51.100.9") == 429


def _prod_login_status(tmp_path: Path, database: Path, trusted: str, forwarded_proto: str | None) -> int:
    env = server_environ(
        database, prod_env(ALLOWED_HOSTS="127.0.0.1", KANDEV_TRUSTED_PROXIES=trusted, KANDEV_HASHED_STATIC="false")
    )
    with running_server(env, tmp_path / "server.log") as server:
        headers = {"X-Forwarded-Proto": forwarded_proto} if forwarded_proto else {}
        return _request(server.url, "GET", "/login/", headers).status


def test_prod_redirects_a_client_claiming_https_itself_to_https(tmp_path, fresh_sqlite):
    assert _prod_login_status(tmp_path, fresh_sqlite, trusted="", forwarded_proto="https") == 301


def test_prod_believes_https_from_its_trusted_proxy_only(tmp_path, fresh_sqlite):
    assert _prod_login_status(tmp_path, fresh_sqlite, trusted="127.0.0.1", forwarded_proto="https") == 200


# The rules themselves, for any chain of hops.

addresses = st.ip_addresses(v=4).map(str)


@given(spoofed=st.lists(addresses, max_size=4), client=addresses, proxies=st.lists(addresses, min_size=1, max_size=3))
def test_the_client_is_the_last_hop_no_trusted_proxy_added(spoofed, client, proxies):
    trusted = {ipaddress.ip_address(p) for p in proxies}
    if ipaddress.ip_address(client) in trusted:
        return
    # The client's own X-Forwarded-For (anything), then its address, then what each trusted proxy appended.
    chain = ", ".join([*spoofed, client, *proxies[:-1]])
    assert str(forwarded_client([chain], lambda address: address in trusted)) == client


@given(st.text())
def test_no_header_value_is_read_as_anything_but_an_address_or_nothing(value):
    found = forwarded_client([value], lambda address: True)
    assert found is None or ipaddress.ip_address(str(found))


@pytest.mark.parametrize(
    ("values", "websocket", "scheme"),
    [
        (["https"], False, "https"),
        (["http"], True, "ws"),
        (["HTTPS"], True, "wss"),
        (["gopher"], False, None),
        ([], False, None),
    ],
)
def test_the_scheme_is_the_last_proxy_s_word_and_only_http_or_https(values, websocket, scheme):
    assert forwarded_scheme(values, websocket) == scheme


@pytest.mark.parametrize("entry", ["not a host", "1.2.3.4/99", "300.1.1.1", "-proxy"])
def test_a_trusted_proxy_that_is_no_address_network_or_host_name_is_refused(entry):
    with pytest.raises(ValueError, match="no IP address"):
        parse_trusted_proxies([entry])


def test_trusted_proxies_read_addresses_networks_and_names():
    trusted = parse_trusted_proxies(["127.0.0.1", "10.0.0.0/8", "proxy", " ", "::1"])
    assert [str(n) for n in trusted.networks] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    assert trusted.names == ("proxy",)
