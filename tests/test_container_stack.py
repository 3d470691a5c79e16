"""The container stack (Dockerfile, deploy/) describes a deployment that works: read as Docker and Caddy would.

Docker is not needed to run it: the compose file is read as YAML and each web
process's environment goes through the same deployment checks a web process
runs before it serves (``kandev_web/sessions/checks.py``).
"""

import re
from pathlib import Path

import yaml

from kandev_web.sessions.checks import problems

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
WEB = {name: service for name, service in SERVICES.items() if name.startswith("web-")}


def interpolated(value: str) -> str:
    """``${NAME:?message}`` as Compose fills it in, with a stand-in for the secret."""
    return re.sub(r"\$\{(\w+)(:\?[^}]*)?\}", lambda match: f"<{match.group(1)}>", value)


def test_every_dependency_names_a_service_of_the_stack():
    for name, service in SERVICES.items():
        for needed in service.get("depends_on", []):
            assert needed in SERVICES, f"{name} depends on {needed}, which is no service"


def test_two_web_processes_share_postgresql_and_redis_and_pass_the_checks_a_web_process_runs():
    assert len(WEB) == 2
    for name, service in WEB.items():
        env = {key: interpolated(str(value)) for key, value in service["environment"].items()}
        assert env["KANDEV_PROFILE"] == "prod"
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["KANDEV_AGENTCTL_HOST"] == service["hostname"] == name
        assert "KANDEV_SILENCED_CHECKS" not in env
        assert problems(env["REDIS_URL"], "django.db.backends.postgresql", env["KANDEV_AGENTCTL_HOST"]) == []
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert service["hostname"] in env["ALLOWED_HOSTS"].split(",")


def test_secrets_come_from_the_environment_and_are_required():
    text = (ROOT / "deploy" / "compose.yaml").read_text()
    for secret in ("SECRET_KEY", "POSTGRES_PASSWORD", "KANDEV_EXECUTOR_TOKEN", "KANDEV_SECRETS_KEY"):
        assert f"${{{secret}:?" in text, f"{secret} must be required, not defaulted"
        assert secret in (ROOT / "deploy" / "env.example").read_text()


def test_the_proxy_spreads_operators_and_agents_over_both_web_processes_and_probes_their_readiness():
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    upstreams = re.findall(r"reverse_proxy ([^{\n]+)", caddyfile)
    assert len(upstreams) == 2
    for listed in upstreams:
        assert sorted(listed.split()) == sorted(f"{name}:8000" for name in WEB)
    assert caddyfile.count("health_uri /readyz") == 2
    mcp_url = WEB["web-a"]["environment"]["KANDEV_MCP_URL"]
    assert mcp_url == "http://proxy:8000/mcp/" and "http://proxy:8000" in caddyfile


def test_the_image_installs_the_wheel_and_runs_as_a_user_of_its_own():
    dockerfile = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)", dockerfile, flags=re.MULTILINE)
    assert stages and all(image.startswith("python:3.1") and image.endswith("-slim") for image in stages)
    assert "pip wheel" in dockerfile and "pip install --no-cache-dir /tmp/dist/*.whl" in dockerfile
    users = re.findall(r"^USER (\S+)", dockerfile, flags=re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert re.search(r'^CMD \["daphne".*"kandev_web\.asgi:application"\]', dockerfile, flags=re.MULTILINE)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "var"} <= set(ignored)
