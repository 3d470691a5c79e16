"""The container stack (Dockerfile, deploy/) describes a deployment that works: read as Docker and Caddy would.

Docker is not needed to run it: the compose file is read as YAML and checked
against the Compose Specification's schema, and each web process's environment
goes through the same deployment checks a web process runs before it serves
(``kandev_web/sessions/checks.py``). The executor host's sshd and scripts run
for real in ``tests/executor/test_container_host.py``.
"""

import json
import re
import shlex
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import jsonschema
import yaml

from kandev_web.sessions.checks import problems
from testing_support.deployment import vapid_private_key
from testing_support.processes import daphne

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


def instructions(dockerfile: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions, in order, as (KEYWORD, arguments): comments dropped, continued lines joined."""
    joined = re.sub(r"\\\n(?:\s*#[^\n]*\n)*", " ", dockerfile)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, arguments = line.partition(" ")
            found.append((keyword.upper(), arguments.strip()))
    return found


def stage_instructions(target: str) -> list[tuple[str, str]]:
    """What building ``target`` runs: the instructions of the stages it is FROM, then its own (FROM lines dropped)."""
    stages: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    current: list[tuple[str, str]] = []
    for keyword, arguments in instructions(DOCKERFILE):
        if keyword == "FROM":
            base, _, name = arguments.partition(" AS ")
            current = []
            stages[name.strip()] = (base.strip(), current)
        else:
            current.append((keyword, arguments))
    base, own = stages[target]
    return (stage_instructions(base) if base in stages else []) + own


#: Where the image keeps the kandev user's home, mapped to a temporary folder when its steps run here.
IMAGE_HOME = "/home/kandev"


def run_as_the_image_would(target: str, home: Path) -> tuple[dict[str, str], list[str]]:
    """Run ``target``'s build steps that run as kandev (our software, not apt-get), as written, under its ENV.

    The steps before ``USER kandev`` install system packages and the wheel; here the
    package is this virtualenv's. Each step runs in ``sh -c`` with only the image's
    environment (its ENV, with ``/home/kandev`` mapped to ``home``): nothing of the
    test's own environment (DJANGO_SETTINGS_MODULE, secrets) leaks in. Returns the
    stage's environment and the steps run.
    """
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    user, workdir, ran = "root", Path("/"), []
    for keyword, arguments in stage_instructions(target):
        if keyword == "ENV":
            for pair in shlex.split(arguments):
                key, _, value = pair.partition("=")
                env[key] = value.replace(IMAGE_HOME, str(home))
        elif keyword == "USER":
            user = arguments
        elif keyword == "WORKDIR":
            workdir = Path(arguments.replace(IMAGE_HOME, str(home)))
            workdir.mkdir(parents=True, exist_ok=True)
        elif keyword == "RUN" and user == "kandev":
            done = subprocess.run(
                ["sh", "-c", arguments], cwd=workdir, env=env, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == 0, f"RUN {arguments}\n{done.stdout}\n{done.stderr}"
            ran.append(arguments)
    return env, ran


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
    # The wheel is built from the sdist, as tests/test_package.py builds it.
    assert "python -m build --outdir /dist ." in dockerfile
    # Both the build tool and the app's dependencies at the versions CI tests with.
    assert "pip install --no-cache-dir -c requirements/lock.txt build" in dockerfile
    assert "COPY requirements/lock.txt /tmp/lock.txt" in dockerfile
    assert "pip install --no-cache-dir -c /tmp/lock.txt /tmp/dist/*.whl" in dockerfile
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


def test_the_web_image_s_build_steps_run_as_written_under_the_web_stage_s_environment(tmp_path):
    home = tmp_path / "home" / "kandev"
    env, ran = run_as_the_image_would("web", home)
    assert any("kandev-web collectstatic" in step for step in ran), ran
    # The prod profile's hashed, compressed static files, where the image keeps them.
    assert env["KANDEV_PROFILE"] == "prod"
    static_root = Path(env["STATIC_ROOT"])
    assert static_root == home / "static"
    manifest = json.loads((static_root / "staticfiles.json").read_text())
    hashed_css = manifest["paths"]["css/app.css"]
    assert re.fullmatch(r"css/app\.[0-9a-f]{12}\.css", hashed_css)
    assert (static_root / f"{hashed_css}.br").is_file()
    # The volumes' mount points, made by kandev in its home.
    assert {"var", "login-key", "login-pub"} <= {path.name for path in home.iterdir()}


def test_no_secret_is_baked_into_the_image():
    for keyword, arguments in instructions(DOCKERFILE):
        if keyword in {"ENV", "ARG", "LABEL"}:
            for pair in shlex.split(arguments):
                assert "SECRET" not in pair.partition("=")[0].upper(), f"{keyword} {arguments}"


def healthcheck_of_the_image() -> list[str]:
    """The web stage's HEALTHCHECK command (exec form), with the script at its path in the repository."""
    (arguments,) = [arguments for keyword, arguments in stage_instructions("web") if keyword == "HEALTHCHECK"]
    command = json.loads(arguments.partition(" CMD ")[2])
    copies = [arguments for keyword, arguments in stage_instructions("web") if keyword == "COPY"]
    (copied,) = [arguments for arguments in copies if command[0] in arguments]
    source, target = copied.split()
    assert target == command[0]
    return [str(ROOT / source), *command[1:]]


def probe(command: list[str], port: int, env: dict[str, str]) -> int:
    """Run a health check command against ``port`` instead of the container's 8000, as Docker would: its exit code."""
    command = [part.replace("127.0.0.1:8000", f"127.0.0.1:{port}") for part in command]
    return subprocess.run(command, env=env, capture_output=True, timeout=30).returncode


def test_the_image_and_the_compose_web_services_report_a_web_process_healthy_while_it_answers(tmp_path):
    command = healthcheck_of_the_image()
    for name, service in WEB.items():
        check = service["healthcheck"]["test"]
        assert check[0] == "CMD", name
        assert [str(ROOT / "deploy" / "web" / "healthcheck"), *check[2:]] == command, name
        assert check[1] == "/usr/local/lib/kandev-web/healthcheck", name
    assert SERVICES["migrate"]["healthcheck"] == {"disable": True}  # it exits once migrated: nothing to probe

    home = tmp_path / "home" / "kandev"
    env, _ = run_as_the_image_would("web", home)
    # A deployment whose ALLOWED_HOSTS does not name localhost: the check names a host it does.
    env |= {
        "SECRET_KEY": "x" * 64,
        "KANDEV_SECRETS_KEY": "a" * 43 + "=",
        "ALLOWED_HOSTS": "kandev.example.com",
        "KANDEV_PUBLIC_URL": "https://kandev.example.com",
        "KANDEV_VAPID_PRIVATE_KEY": vapid_private_key(),
    }
    with daphne(env, cwd=home, command=("daphne",)) as (port, _):
        assert probe(command, port, env) == 0
        # What the check asks for is what Django would refuse from any other host.
        assert probe(command, port, env | {"ALLOWED_HOSTS": "localhost"}) == 1
    assert probe(command, port, env) == 1
