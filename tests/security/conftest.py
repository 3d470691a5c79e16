"""What the security suite's prod-profile subprocesses share."""

import pytest

from kandev_web import asgi
from testing_support.deployment import prod_env, run_clean


class _IdleRunner:
    def ensure_started(self) -> None:
        pass


@pytest.fixture
def no_agent_runner(monkeypatch):
    """The ASGI app starts this process's agent runner on its first request; in the
    test process that would leave a thread polling the test database (adopting
    other tests' executions) for the rest of the run."""
    monkeypatch.setattr(asgi, "runner", _IdleRunner())


@pytest.fixture(scope="session")
def collected(tmp_path_factory):
    """``manage.py collectstatic`` under the prod profile, as a deployment runs it once per release."""
    root = tmp_path_factory.mktemp("static-root")
    home = tmp_path_factory.mktemp("home")
    result = run_clean(home, "manage.py", "collectstatic", "--no-input", "-v0", **prod_env(STATIC_ROOT=str(root)))
    assert result.returncode == 0, result.stderr
    return root
