"""URL-mode elicitation, the pure half: which requests and which addresses an operator is shown.

An agent (for the Claude bridge: an MCP server behind it) asks the operator to
open a page, typically an OAuth sign-in. kandev never opens it itself: it shows
the address and lets the operator click it. Only addresses that cannot run
anything in kandev's page and cannot be read in transit are shown: ``https``,
and ``http`` to this machine's loopback when the deployment allows it (a
development sign-in server). Everything else is declined at once, with a
sentence for the operator (``docs/decisions/url-mode.md``).

No I/O, no asyncio, no Django; nothing here logs or returns the URL in a reason.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from kandev_web.agentctl.elicitation.types import Decline, DeclineReason

#: The longest URL shown; an OAuth authorize URL with a PKCE challenge and state is well under it.
MAX_URL_CHARS = 4096

#: The longest ``message`` or ``elicitationId`` taken; the same bound as a form's texts would be generous.
MAX_MESSAGE_CHARS = 4096
MAX_ELICITATION_ID_CHARS = 256

_LOOPBACK_NAMES = {"localhost"}


class UrlProblem(StrEnum):
    """Why an address is refused; a code, never the address (it may carry a token)."""

    MALFORMED = "malformed"
    NOT_HTTPS = "not_https"
    HTTP_NOT_LOOPBACK = "http_not_loopback"
    HTTP_LOOPBACK_NOT_ALLOWED = "http_loopback_not_allowed"
    CREDENTIALS = "credentials"
    TOO_LONG = "too_long"


def url_problem(url: object, *, allow_http_loopback: bool) -> UrlProblem | None:
    """Why ``url`` may not be shown to an operator, or None when it may.

    ``https`` with a host is fine; ``http`` only to ``localhost``, ``127.0.0.0/8``
    or ``::1`` and only when ``allow_http_loopback``. Every other scheme
    (``javascript:``, ``data:``, ``file:``, ...) is refused, as are addresses
    with a user name or password in them (``https://bank.example@evil.example``
    reads as one host and goes to another) and anything with whitespace or
    control characters, which browsers strip or reinterpret.
    """
    if not isinstance(url, str) or not url:
        return UrlProblem.MALFORMED
    if len(url) > MAX_URL_CHARS:
        return UrlProblem.TOO_LONG
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or ch == "\\" for ch in url):
        return UrlProblem.MALFORMED
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 -- raises on a port that is not a number in range
    except ValueError:
        return UrlProblem.MALFORMED
    scheme = parts.scheme.lower()
    if scheme not in {"https", "http"}:
        return UrlProblem.NOT_HTTPS
    if not host or not parts.netloc or _has_bad_host(host):
        return UrlProblem.MALFORMED
    if parts.username is not None or parts.password is not None:
        return UrlProblem.CREDENTIALS
    if scheme == "http":
        if not is_loopback(host):
            return UrlProblem.HTTP_NOT_LOOPBACK
        if not allow_http_loopback:
            return UrlProblem.HTTP_LOOPBACK_NOT_ALLOWED
    return None


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1``; a name that merely ends in them is not."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_host(url: str) -> str:
    """The host an operator should check before opening ``url`` (lower case, no port): the part shown in bold."""
    return urlsplit(url).hostname or ""


def _has_bad_host(host: str) -> bool:
    """A host with characters no real host has: the parser took it apart wrongly, or it is a trick."""
    return any(ch in host for ch in "@%<>\"'`{}|^")


@dataclass(frozen=True, slots=True)
class UrlRequest:
    """A URL-mode ``elicitation/create`` that is well formed; its URL not yet judged."""

    session_id: str
    elicitation_id: str
    url: str
    message: str

    def problem(self, *, allow_http_loopback: bool) -> UrlProblem | None:
        return url_problem(self.url, allow_http_loopback=allow_http_loopback)

    def wire(self) -> dict[str, str]:
        """The additions of ``elicitation.requested`` for a URL request (``docs/agent-stream.md``)."""
        return {"mode": "url", "url": self.url, "elicitation_id": self.elicitation_id}


def is_url_mode(params: object) -> bool:
    return isinstance(params, dict) and params.get("mode") == "url"


def read_url_request(params: object) -> UrlRequest | Decline:
    """The parts of a URL-mode request kandev needs, or the reason it is declined at once.

    ``url`` that is a string of any content passes here: whether it may be
    shown is :func:`url_problem`'s business, and the operator is told about it.
    """
    if not isinstance(params, dict):
        return Decline(DeclineReason.NOT_AN_OBJECT)
    if params.get("mode") != "url":
        return Decline(DeclineReason.UNSUPPORTED_MODE)
    session_id = params.get("sessionId")
    if params.get("requestId") is not None:
        return Decline(DeclineReason.BOTH_SCOPES if session_id is not None else DeclineReason.REQUEST_SCOPED)
    if not isinstance(session_id, str) or not session_id:
        return Decline(DeclineReason.MISSING_SESSION_ID)
    elicitation_id = params.get("elicitationId")
    url = params.get("url")
    message = params.get("message", "")
    if not isinstance(elicitation_id, str) or not 0 < len(elicitation_id) <= MAX_ELICITATION_ID_CHARS:
        return Decline(DeclineReason.MALFORMED_REQUEST)
    if not isinstance(url, str) or not isinstance(message, str) or len(message) > MAX_MESSAGE_CHARS:
        return Decline(DeclineReason.MALFORMED_REQUEST)
    return UrlRequest(session_id=session_id, elicitation_id=elicitation_id, url=url, message=message)
