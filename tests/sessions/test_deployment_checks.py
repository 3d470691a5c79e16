"""Several web processes need a shared database and reachable agentctls: anything else is refused before serving."""

import subprocess
import sys

import pytest
from django.core import checks

from kandev_web.sessions.checks import TAG, problems
from testing_support.processes import free_port, server_environ

SQLITE, POSTGRES = "django.db.backends.sqlite3", "django.db.backends.postgresql"
REDIS = "redis://redis.internal:6379/0"


def ids(found) -> list[str]:
    return [error.id for error in found]


def test_one_process_needs_nothing_more_whatever_its_database_and_agentctl_host():
    assert problems("", SQLITE, "127.0.0.1") == []


def test_redis_with_sqlite_is_refused_for_several_processes_on_one_file():
    assert ids(problems(REDIS, SQLITE, "10.0.0.12")) == ["kandev.E001"]
    assert problems(REDIS, POSTGRES, "10.0.0.12") == []


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_redis_with_agentctl_on_loopback_is_refused(host):
    assert ids(problems(REDIS, POSTGRES, host)) == ["kandev.E002"]


def test_a_finding_can_be_silenced_when_every_web_process_is_on_one_machine(settings):
    settings.REDIS_URL, settings.KANDEV_AGENTCTL_HOST = REDIS, "127.0.0.1"
    assert ids(checks.run_checks(tags=[TAG])) == ["kandev.E001", "kandev.E002"]

    settings.SILENCED_SYSTEM_CHECKS = ["kandev.E002"]

    assert [error.id for error in checks.run_checks(tags=[TAG]) if not error.is_silenced()] == ["kandev.E001"]


def test_daphne_refuses_to_serve_a_deployment_the_checks_refuse(tmp_path):
    env = server_environ(tmp_path / "db.sqlite3", {"REDIS_URL": "redis://127.0.0.1:9/0"})
    served = subprocess.run(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(free_port()), "kandev_web.asgi:application"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert served.returncode != 0
    assert "kandev.E001: REDIS_URL is set, so several web processes may run" in served.stderr
    assert "kandev.E002" in served.stderr
