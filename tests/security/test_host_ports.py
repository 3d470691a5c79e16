"""The Host header names no port ALLOWED_HOSTS does not allow, and the agent's MCP URL never comes from it.

An operator chooses the Host header of their own requests. Django ignores its
port, so ``Host: 127.0.0.1:<any port>`` passed an ``ALLOWED_HOSTS`` of
``127.0.0.1:8000``; and a session started that way told its agent to send its
questions, bearer token and all, to that port.
"""

import pytest
from django.test import Client, override_settings
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.host_ports import HostRule, django_allowed_hosts, parse_allowed_hosts, port_allowed
from kandev_web.sessions import services

RULES = parse_allowed_hosts(["127.0.0.1:8000", "kandev.example.com", ".example.org:8443"])


def _allowing(entries: list[str]):
    rules = parse_allowed_hosts(entries)
    return override_settings(ALLOWED_HOSTS=django_allowed_hosts(rules), KANDEV_ALLOWED_HOST_RULES=rules)


@pytest.mark.django_db
def test_a_request_to_a_port_allowed_hosts_does_not_name_is_refused_like_an_unknown_host():
    with _allowing(["127.0.0.1:8000"]):
        assert Client().get("/healthz", HTTP_HOST="127.0.0.1:8000").status_code == 200
        assert Client().get("/healthz", HTTP_HOST="127.0.0.1:9999").status_code == 400
        assert Client().get("/healthz", HTTP_HOST="127.0.0.1").status_code == 400, "port 80 is not 8000"


@pytest.mark.django_db
def test_an_entry_without_a_port_allows_any_as_django_does():
    with _allowing(["127.0.0.1"]):
        assert Client().get("/healthz", HTTP_HOST="127.0.0.1:9999").status_code == 200


def test_entries_read_as_names_and_ports():
    assert parse_allowed_hosts(["127.0.0.1:8000", "kandev.example.com", ".example.org:8443"]) == [
        HostRule("127.0.0.1", 8000),
        HostRule("kandev.example.com", None),
        HostRule(".example.org", 8443),
    ]
    assert parse_allowed_hosts(["[::1]:8000", "[::1]", "*"]) == [
        HostRule("[::1]", 8000),
        HostRule("[::1]", None),
        HostRule("*", None),
    ]
    assert django_allowed_hosts(parse_allowed_hosts(["a:1", "a:2", "b"])) == ["a", "b"]
    with pytest.raises(ValueError, match="out of range"):
        parse_allowed_hosts(["a:70000"])


@pytest.mark.parametrize(
    ("host", "scheme", "allowed"),
    [
        ("127.0.0.1:8000", "http", True),
        ("127.0.0.1:8001", "http", False),
        ("kandev.example.com:1234", "https", True),
        ("a.example.org:8443", "https", True),
        ("a.example.org", "https", False),
        ("a.example.org:443", "wss", False),
    ],
)
def test_the_port_must_be_one_an_entry_for_the_name_allows(host, scheme, allowed):
    assert port_allowed(host, scheme, RULES) is allowed


@given(port=st.integers(min_value=1, max_value=65535))
def test_with_a_port_named_every_other_port_is_refused(port):
    assert port_allowed(f"127.0.0.1:{port}", "http", RULES) is (port == 8000)


# The MCP URL a session's agent is told.


@pytest.fixture
def started(monkeypatch):
    """The MCP URLs the task page started sessions with."""
    urls = []
    monkeypatch.setattr(services, "start_session", lambda task, profile, prompt, mcp_url: urls.append(mcp_url))
    return urls


def _start(client, task, profile, host: str):
    return client.post(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk, "prompt": "Go"}, HTTP_HOST=host)


@override_settings(KANDEV_MCP_URL="https://kandev.example.com/mcp/", ALLOWED_HOSTS=["*"])
def test_the_agent_s_mcp_url_is_the_configured_one_whatever_host_the_operator_sent(
    operator_client, make_task, make_profile, started
):
    assert _start(operator_client, make_task(), make_profile(), "127.0.0.1:9999").status_code == 204
    assert started == ["https://kandev.example.com/mcp/"]


@override_settings(KANDEV_MCP_URL="", ALLOWED_HOSTS=["*"])
def test_unconfigured_dev_tells_the_agent_the_server_s_own_address_not_the_host_header(
    operator_client, make_task, make_profile, started
):
    assert _start(operator_client, make_task(), make_profile(), "attacker.example:9999").status_code == 204
    # The test client's server is testserver:80 (a real one: the address its socket listens on).
    assert started == ["http://testserver:80/mcp/"]
