"""The container stack (Dockerfile, deploy/) describes a deployment that works: read as Docker and Caddy would.

Docker is not needed to run it: the compose file is read as YAML and checked
against the Compose Specification's schema, and each web process's environment
goes through the same deployment checks a web process runs before it serves
(``kandev_web/sessions/checks.py``). The executor host's sshd and scripts run
for real in ``tests/executor/test_container_host.py``.
"""

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import yaml

from kandev_web.sessions.checks import problems

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
WEB = {name: service for name, service in SERVICES.items() if name.startswith("web-")}
DOCKERFILE = (ROOT / "Dockerfile").read_text()
#: Each stage's name and what it starts FROM, in order.
STAGES = re.findall(r"^FROM (\S+)(?: AS (\S+))?$", DOCKERFILE, flags=re.MULTILINE)


def volume_target(service: dict, volume: str) -> tuple[str, str]:
    """Where ``service`` mounts the named ``volume``, and its mode ("rw" unless ``:ro``)."""
    for entry in service.get("volumes", []):
        source, target, *mode = entry.split(":")
        if source == volume:
            return target, (mode or ["rw"])[0]
    raise AssertionError(f"no volume {volume} in {service}")


def stage_of(target: str) -> str:
    """The base of the Dockerfile stage ``target`` names."""
    return next(base for base, name in STAGES if name == target)


def test_the_compose_file_is_valid_by_the_compose_specification():
    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    jsonschema.validate(COMPOSE, schema)


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
        assert env["DATABASE_URL"].startswith("postgres://")
        assert "@postgres:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["KANDEV_AGENTCTL_HOST"] == service["hostname"] == name
        assert "KANDEV_SILENCED_CHECKS" not in env
        assert problems(env["REDIS_URL"], "django.db.backends.postgresql", env["KANDEV_AGENTCTL_HOST"]) == []
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert service["hostname"] in env["ALLOWED_HOSTS"].split(",")
        assert service["build"] == {"context": "..", "target": "web"}


def test_the_executor_host_is_the_image_s_executor_target_reached_on_the_compose_network_only():
    executor = SERVICES["executor"]
    assert executor["build"] == {"context": "..", "target": "executor"}
    assert stage_of("executor") == "base"
    assert "openssh-server" in DOCKERFILE
    assert "command" not in executor  # the image's entrypoint: sshd, not the retired service
    assert executor["init"] is True  # agents' orphans are reaped
    assert 'CMD ["/usr/local/lib/kandev-sshd/entrypoint"]' in DOCKERFILE
    assert "COPY deploy/executor/ /usr/local/lib/kandev-sshd/" in DOCKERFILE
    assert "ports" not in executor, "the executor's sshd is for the web processes, not the Docker host's network"
    # Its host key (var/ssh), agents' workdirs and worktrees live on its volume, kept across restarts.
    assert volume_target(executor, "executor") == ("/home/kandev/var", "rw")
    assert "executor" in COMPOSE["volumes"]


def test_the_web_processes_log_in_with_the_private_key_the_executor_authorizes_the_public_half_of():
    maker = SERVICES["login-key"]
    assert maker["build"]["target"] == "executor"  # ssh-keygen comes with openssh-server
    private_dir, public_dir = maker["command"][1:]
    assert maker["command"][0] == "/usr/local/lib/kandev-sshd/login-key"
    assert volume_target(maker, "login-key") == (private_dir, "rw")
    assert volume_target(maker, "login-pub") == (public_dir, "rw")
    for name, service in WEB.items():
        key_file = service["environment"]["KANDEV_SSH_KEY_FILE"]
        mounted, mode = volume_target(service, "login-key")
        assert key_file == f"{mounted}/id_ed25519", name
        assert mounted == private_dir, name
        assert mode == "ro", name
        assert service["depends_on"]["login-key"] == {"condition": "service_completed_successfully"}
    executor = SERVICES["executor"]
    # The executor gets the public half only: agents there run as the login user.
    assert volume_target(executor, "login-pub") == (public_dir, "ro")
    assert "login-key" not in json.dumps(executor.get("volumes", []))
    assert executor["depends_on"]["login-key"] == {"condition": "service_completed_successfully"}
    entrypoint = (ROOT / "deploy" / "executor" / "entrypoint").read_text()
    assert f"KANDEV_SSHD_AUTHORIZED_KEYS:-{public_dir}/id_ed25519.pub" in entrypoint
    assert "KANDEV_SSHD_STATE:-/home/kandev/var/ssh" in entrypoint
    # The mount points exist in the image, owned by kandev: each new named volume takes that owner.
    assert "RUN mkdir var login-key login-pub" in DOCKERFILE


def test_secrets_come_from_the_environment_and_are_required():
    text = (ROOT / "deploy" / "compose.yaml").read_text()
    for secret in ("SECRET_KEY", "POSTGRES_PASSWORD", "KANDEV_SECRETS_KEY"):
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
    assert mcp_url == "http://proxy:8000/mcp/"
    assert "http://proxy:8000" in caddyfile


def test_the_image_installs_the_wheel_and_runs_as_a_user_of_its_own():
    dockerfile = DOCKERFILE
    names = [name for _, name in STAGES]
    images = [base for base, _ in STAGES if base not in names]
    assert images
    assert all(image.startswith("python:3.1") and image.endswith("-slim") for image in images)
    assert "pip wheel" in dockerfile
    assert "pip install --no-cache-dir /tmp/dist/*.whl" in dockerfile
    # Every runtime stage ends as kandev, the executor host's sshd included.
    for stage in re.split(r"^FROM ", dockerfile, flags=re.MULTILINE)[2:]:
        users = re.findall(r"^USER (\S+)", stage, flags=re.MULTILINE) or ["kandev"]  # a stage FROM base is kandev
        assert users[-1] == "kandev", stage.splitlines()[0]
    # The web image is the default target (the last stage), as `docker build .` gives it.
    assert names[-1] == "web"
    assert stage_of("web") == "base"
    assert re.search(r'^CMD \["daphne".*"kandev_web\.asgi:application"\]', dockerfile, flags=re.MULTILINE)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "var"} <= set(ignored)
