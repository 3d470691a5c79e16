"""Which URL-mode requests and addresses reach an operator (``elicitation.url``): pure rules."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import Decline, DeclineReason
from kandev_web.agentctl.elicitation.url import (
    MAX_URL_CHARS,
    UrlProblem,
    UrlRequest,
    is_loopback,
    read_url_request,
    url_host,
    url_problem,
)


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.test/authorize?x=1",
        "https://AUTH.example.test:8443/a/b#frag",
        "HTTPS://auth.example.test",
        "https://[2001:db8::1]/cb",
        "https://127.0.0.1/callback",
    ],
)
def test_https_addresses_are_shown(url: str) -> None:
    assert url_problem(url, allow_http_loopback=False) is None


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://example.com/login", UrlProblem.HTTP_NOT_LOOPBACK),
        ("http://localhost.example.com/", UrlProblem.HTTP_NOT_LOOPBACK),
        ("http://10.0.0.1/", UrlProblem.HTTP_NOT_LOOPBACK),
        ("javascript:alert(1)", UrlProblem.NOT_HTTPS),
        ("JavaScript://%0aalert(1)", UrlProblem.NOT_HTTPS),
        ("data:text/html,<script>alert(1)</script>", UrlProblem.NOT_HTTPS),
        ("file:///etc/passwd", UrlProblem.NOT_HTTPS),
        ("ftp://example.com/", UrlProblem.NOT_HTTPS),
        ("//example.com/no-scheme", UrlProblem.NOT_HTTPS),
        ("https://bank.example@evil.example/", UrlProblem.CREDENTIALS),
        ("https://user:pw@example.com/", UrlProblem.CREDENTIALS),
        ("https:///no-host", UrlProblem.MALFORMED),
        ("https://", UrlProblem.MALFORMED),
        ("https://exa mple.com/", UrlProblem.MALFORMED),
        ("https://example.com/\nSet-Cookie", UrlProblem.MALFORMED),
        ("https://example.com:99999/", UrlProblem.MALFORMED),
        ("https://[::1/", UrlProblem.MALFORMED),
        ("https:\\\\evil.example", UrlProblem.MALFORMED),
        ("", UrlProblem.MALFORMED),
        ("https://example.com/" + "a" * MAX_URL_CHARS, UrlProblem.TOO_LONG),
    ],
)
def test_anything_else_is_refused_with_its_reason(url: str, problem: UrlProblem) -> None:
    assert url_problem(url, allow_http_loopback=True) is problem


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "[::1]"])
def test_http_to_loopback_only_where_the_deployment_allows_it(host: str) -> None:
    url = f"http://{host}:8765/callback"
    assert url_problem(url, allow_http_loopback=True) is None
    assert url_problem(url, allow_http_loopback=False) is UrlProblem.HTTP_LOOPBACK_NOT_ALLOWED


@pytest.mark.parametrize("value", [None, 1, ["https://example.com"], {"url": "https://example.com"}])
def test_a_url_that_is_not_a_string_is_malformed(value: object) -> None:
    assert url_problem(value, allow_http_loopback=True) is UrlProblem.MALFORMED


def test_the_host_is_what_the_operator_checks() -> None:
    assert url_host("https://Auth.Example.test:8443/authorize?next=https://evil.example") == "auth.example.test"
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("localhost.evil.example")


SCHEMES = st.sampled_from(["https", "http", "javascript", "data", "file", "vbscript", "ftp", "blob", "about", ""])
HOSTS = st.one_of(
    st.sampled_from(["localhost", "127.0.0.1", "[::1]", "example.com", "auth.example.test", "10.1.2.3", ""]),
    st.text(alphabet=string.ascii_letters + string.digits + ".-@:%[]", max_size=30),
)


@given(scheme=SCHEMES, host=HOSTS, rest=st.text(max_size=60), allow=st.booleans())
def test_a_shown_address_is_https_or_allowed_loopback_http(scheme: str, host: str, rest: str, allow: bool) -> None:
    url = f"{scheme}://{host}/{rest}"
    if url_problem(url, allow_http_loopback=allow) is not None:
        return
    lowered = url.lower()
    assert lowered.startswith(("https://", "http://"))
    assert not any(ch.isspace() or ord(ch) < 0x20 for ch in url)
    shown_host = url_host(url)
    assert shown_host
    if lowered.startswith("http://"):
        assert allow
        assert is_loopback(shown_host)


@given(st.text(max_size=200), st.booleans())
def test_any_string_gets_a_verdict_and_never_an_exception(url: str, allow: bool) -> None:
    verdict = url_problem(url, allow_http_loopback=allow)
    assert verdict is None or isinstance(verdict, UrlProblem)
    if verdict is None:
        assert url.lower().startswith(("https:", "http:"))


def test_the_bridge_s_request_reads_as_captured(load_fixture) -> None:
    captured = load_fixture("0.101.0", "url_elicitation.json")["elicitation_create"]["params"]
    request = read_url_request(captured)
    assert request == UrlRequest(
        session_id=captured["sessionId"],
        elicitation_id=captured["elicitationId"],
        url="https://auth.example.test/authorize?x=1",
        message="Please authorize keysrv in your browser.",
    )
    assert request.problem(allow_http_loopback=False) is None
    assert request.wire() == {"mode": "url", "url": request.url, "elicitation_id": request.elicitation_id}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"elicitationId": None}, DeclineReason.MALFORMED_REQUEST),
        ({"elicitationId": ""}, DeclineReason.MALFORMED_REQUEST),
        ({"elicitationId": "x" * 257}, DeclineReason.MALFORMED_REQUEST),
        ({"url": None}, DeclineReason.MALFORMED_REQUEST),
        ({"message": 3}, DeclineReason.MALFORMED_REQUEST),
        ({"sessionId": None}, DeclineReason.MISSING_SESSION_ID),
        ({"requestId": "r1"}, DeclineReason.BOTH_SCOPES),
        ({"mode": "form"}, DeclineReason.UNSUPPORTED_MODE),
    ],
)
def test_a_malformed_url_request_is_declined(change: dict, reason: DeclineReason) -> None:
    params = {"mode": "url", "sessionId": "s", "elicitationId": "e", "url": "https://a.test", "message": "m", **change}
    assert read_url_request(params) == Decline(reason)
