"""``ALLOWED_HOSTS`` entries that name a port allow that port only.

Django compares the Host header's name with ``ALLOWED_HOSTS`` and ignores its
port, so with ``127.0.0.1:8000`` allowed, ``Host: 127.0.0.1:9999`` passed too,
and whatever reads the Host header (a link, an origin, once the MCP URL
handed to agents) read a port nobody configured. Here an entry may carry a
port (``kandev.example.com:8443``, ``[::1]:8000``): Django is given the name,
and :class:`HostPortMiddleware` (and the WebSocket origin check) refuse a
Host whose port no entry for its name allows. An entry without a port allows
any, as Django does; a Host without a port is on its scheme's default port.
"""

import re
from typing import NamedTuple

from django.core.exceptions import DisallowedHost
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_WITH_PORT = re.compile(r"^(?P<name>\[[^\]]*\]|[^:\[\]]*):(?P<port>\d{1,5})$")


class HostRule(NamedTuple):
    pattern: str
    port: int | None


def parse_allowed_hosts(entries: list[str]) -> list[HostRule]:
    """``ALLOWED_HOSTS`` entries as name patterns and ports; ``ValueError`` for a port out of range."""
    rules = []
    for entry in entries:
        match = _WITH_PORT.match(entry.strip())
        if match is None:
            rules.append(HostRule(entry.strip(), None))
            continue
        port = int(match["port"])
        if not 0 < port < 65536:
            raise ValueError(f"{entry!r} names a port out of range")
        rules.append(HostRule(match["name"], port))
    return rules


def django_allowed_hosts(rules: list[HostRule]) -> list[str]:
    """The names alone, once each, as Django's ``ALLOWED_HOSTS`` wants them."""
    return list(dict.fromkeys(rule.pattern for rule in rules))


def port_allowed(host: str, scheme: str, rules: list[HostRule]) -> bool:
    """Whether the Host header ``host`` names a port an entry for its name allows (the name is Django's to judge)."""
    domain, port_text = split_domain_port(host)
    matching = [rule for rule in rules if domain and validate_host(domain, [rule.pattern])]
    if not matching or any(rule.port is None for rule in matching):
        return True
    port = DEFAULT_PORTS.get(scheme, -1) if not port_text else int(port_text) if port_text.isdigit() else -1
    return any(rule.port == port for rule in matching)


class HostPortMiddleware:
    """Refuse (400, as Django refuses an unknown host) a request whose Host port ``ALLOWED_HOSTS`` does not name."""

    def __init__(self, get_response):
        from django.conf import settings

        self.get_response = get_response
        self.rules: list[HostRule] = settings.KANDEV_ALLOWED_HOST_RULES
        self.active = any(rule.port is not None for rule in self.rules)

    def __call__(self, request):
        if self.active:
            host = request.get_host()  # Django's own check of the name first
            if not port_allowed(host, request.scheme, self.rules):
                raise DisallowedHost(f"Invalid HTTP_HOST header: {host!r}. Its port is not in ALLOWED_HOSTS.")
        return self.get_response(request)
