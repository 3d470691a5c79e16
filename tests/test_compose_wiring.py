"""The compose stack's web processes share one Web Push identity and believe only Caddy's proxy headers.

Read as Docker would (``${NAME:?…}`` from ``deploy/.env``, made from
``deploy/env.example``) and judged by the checks and parsers a web process uses.
"""

import re
from pathlib import Path

import yaml
from django.conf import settings

from kandev_web.notifications.checks import subject_problem
from kandev_web.proxy_headers import parse_trusted_proxies

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
WEB = {name: service for name, service in COMPOSE["services"].items() if name.startswith("web-")}
ENV_EXAMPLE = dict(
    line.split("=", 1)
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines()
    if "=" in line and not line.startswith("#")
)
CADDYFILE = (ROOT / "deploy" / "Caddyfile").read_text()


def _from_dotenv(value: str) -> str:
    """``value`` as Compose fills it in from a deploy/.env copied from env.example."""
    return re.sub(r"\$\{(\w+)(:\?[^}]*)?\}", lambda match: ENV_EXAMPLE[match.group(1)], str(value))


def test_every_secret_compose_asks_for_is_in_env_example():
    asked = set(re.findall(r"\$\{(\w+):\?", (ROOT / "deploy" / "compose.yaml").read_text()))
    assert {"KANDEV_VAPID_PRIVATE_KEY", "KANDEV_VAPID_SUBJECT"} <= asked
    assert asked <= set(ENV_EXAMPLE)


def test_every_web_process_signs_web_push_with_the_one_key_from_the_env_file():
    keys = {service["environment"]["KANDEV_VAPID_PRIVATE_KEY"] for service in WEB.values()}
    assert keys == {"${KANDEV_VAPID_PRIVATE_KEY:?set KANDEV_VAPID_PRIVATE_KEY in deploy/.env}"}
    assert COMPOSE["services"]["migrate"]["environment"]["KANDEV_VAPID_PRIVATE_KEY"] in keys


def test_every_web_process_knows_its_public_url_and_a_contact_push_services_accept():
    for service in WEB.values():
        env = {key: _from_dotenv(value) for key, value in service["environment"].items()}
        assert env["KANDEV_PUBLIC_URL"] == "https://localhost:8443"
        assert env["KANDEV_PUBLIC_URL"] in env["CSRF_TRUSTED_ORIGINS"].split(",")
        assert subject_problem(env["KANDEV_VAPID_SUBJECT"]) is None
        assert env["KANDEV_MCP_URL"] == "http://proxy:8000/mcp/"


def test_only_the_proxy_service_s_headers_are_believed_and_not_daphne_s_way():
    assert "proxy" in COMPOSE["services"]
    for service in WEB.values():
        trusted = parse_trusted_proxies(service["environment"]["KANDEV_TRUSTED_PROXIES"].split(","))
        assert trusted.names == ("proxy",)
        assert not trusted.networks
        # Daphne's --proxy-headers would believe X-Forwarded-For from any peer, forged ones too.
        assert "--proxy-headers" not in " ".join(service.get("command", []))


def _sites(caddyfile: str) -> dict[str, str]:
    """Each site block's address and body (top-level blocks, snippets included)."""
    return dict(re.findall(r"^(\S[^{\n]*?) \{\n(.*?)^\}", caddyfile, flags=re.MULTILINE | re.DOTALL))


def _megabytes(size: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(KB|MB|GB)", size).groups()
    return int(number) * {"KB": 1e3, "MB": 1e6, "GB": 1e9}[unit] / 1e6


def test_caddy_caps_every_site_s_request_bodies_above_the_app_s_own_limit():
    blocks = _sites(CADDYFILE)
    limit = re.search(r"request_body \{\s*max_size (\S+)\s*\}", blocks["(limits)"]).group(1)
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1e6 < _megabytes(limit) <= 8
    sites = {address: body for address, body in blocks.items() if not address.startswith("(")}
    assert set(sites) == {"https://localhost:8443", "http://proxy:8000"}
    for address, body in sites.items():
        assert "import limits" in body, address
