"""Browser tests against a real ASGI server.

Each test module gets its own Daphne subprocess on a free port, with a fresh
SQLite database copied from a once-migrated template and the module's own
environment: a module sets ``SERVER_ENV = {"KANDEV_FEATURES_…": "true"}`` the
way Kandev's e2e specs restart their backend per spec. Inherited
``KANDEV_FEATURES_*`` variables are stripped so no flag leaks in.

Every browser context a test opens is watched for Content-Security-Policy
violations (``browser`` below): a test whose pages broke the policy fails.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from playwright.sync_api import expect

from .processes import CHROMIUM, CHROMIUM_ARGS, free_port, server_environ, stop_group, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "e2e-password-123"
#: How long an agent may take, on a busy machine, from Start to its first question on the page: agentctl
#: and the agent start, ACP's handshake and turn, the question asked (through MCP, for the ask path).
AGENT_STARTS_MS = 20_000


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


#: Reports each CSP violation of a page to the test, through a binding (outside the page's policy),
#: and keeps them in ``window.cspViolations`` for a test to wait on.
CSP_WATCH = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const text = `${event.effectiveDirective} refused ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile}:${event.lineNumber}` + (event.sample ? ` (${event.sample})` : "");
  window.cspViolations.push(text);
  window.__kandevCspViolation(text);
}, true);
"""


class CspWatchedBrowser:
    """The session's browser, whose every new context reports the CSP violations of its pages.

    Both the ``securitypolicyviolation`` events and Chromium's "Refused to …"
    console errors count. Playwright's ``bypass_csp`` is refused: the suite
    runs under the policy the operator's browser gets.
    """

    def __init__(self, browser):
        self._browser = browser
        self.violations: list[str] = []
        self._contexts: list = []

    def __getattr__(self, name):
        return getattr(self._browser, name)

    def new_context(self, **kwargs):
        return self._watch(self._browser.new_context(**kwargs), kwargs)

    def new_page(self, **kwargs):
        page = self._browser.new_page(**kwargs)
        self._watch(page.context, kwargs)
        return page

    def _watch(self, context, kwargs):
        assert not kwargs.get("bypass_csp"), "the browser suite runs under the Content-Security-Policy"
        context.expose_binding("__kandevCspViolation", lambda source, text: self.violations.append(text))
        context.add_init_script(CSP_WATCH)
        context.on("console", self._console)
        # Closed by its owner (pytest-playwright's ``context`` fixture, a test), it is not closed again.
        self._contexts.append(context)
        context.on("close", lambda closed: self._contexts.remove(closed) if closed in self._contexts else None)
        return context

    def close_contexts(self) -> None:
        """Close what the test opened: a page left open keeps reconnecting its sockets.

        The session's browser outlives each module's server, so a forgotten
        page would knock on a port the kernel later hands to another test's
        listener (a fake API, a denying proxy) and be counted there.
        """
        for context in list(self._contexts):
            context.close()

    def _console(self, message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.violations.append(message.text)


@pytest.fixture
def browser(browser):
    """pytest-playwright's browser, failing the test at teardown if any page broke the CSP."""
    watched = CspWatchedBrowser(browser)
    yield watched
    watched.close_contexts()
    assert watched.violations == [], "Content-Security-Policy violations:\n" + "\n".join(watched.violations)


@pytest.fixture(scope="session")
def template_database(tmp_path_factory) -> Path:
    database = tmp_path_factory.mktemp("template") / "db.sqlite3"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env=server_environ(database, {}),
        check=True,
    )
    return database


@dataclass
class Server:
    url: str
    env: dict[str, str]
    process: subprocess.Popen

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        )
        return result.stdout

    def create_operator(self, username: str, *, workspace: str, staff: bool = False, tasks: bool = False) -> dict:
        # --no-showcase: no test gets the demo's flag override or repository by accident (e2e/test_demo.py does).
        args = ["demo", "--json", "--no-showcase", "--username", username, "--password", PASSWORD]
        args += ["--workspace", workspace]
        args += [] if staff else ["--no-staff"]
        args += [] if tasks else ["--no-tasks"]
        return json.loads(self.manage(*args))


@pytest.fixture(scope="module")
def postgres_url():
    """A database of its own on the PostgreSQL that scripts/test starts, dropped after the module."""
    base = os.environ.get("KANDEV_TEST_POSTGRES_URL")
    if not base:
        pytest.fail("KANDEV_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts PostgreSQL.")
    name = f"kandev_e2e_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(base)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    yield url
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repository(tmp_path):
    """A small git repository, ``shop``, with one commit on ``main``: for tasks that work in worktrees."""
    path = tmp_path / "shop"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# Shop\n")
    git(path, "add", "README.md")
    git(path, "-c", "user.email=dev@example.com", "-c", "user.name=Dev", "commit", "-q", "-m", "Start")
    return path


@contextmanager
def running_server(env: dict[str, str], log_path: Path):
    """A Daphne process serving kandev-web with ``env``, until the block ends."""
    port = free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "kandev_web.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group, so the agentctl and agent processes it
            # started end with it instead of outliving the test.
            start_new_session=True,
        )
        try:
            wait_for_port(port, process, time.monotonic() + 30)
            yield Server(url=f"http://127.0.0.1:{port}", env=env, process=process)
        finally:
            stop_group(process)


@pytest.fixture(scope="module")
def fresh_database(template_database, tmp_path_factory) -> Path:
    database = tmp_path_factory.mktemp("e2e-db") / "db.sqlite3"
    shutil.copy(template_database, database)
    return database


@pytest.fixture(scope="module")
def server(request, fresh_database):
    env = server_environ(fresh_database, getattr(request.module, "SERVER_ENV", {}))
    with running_server(env, fresh_database.parent / "server.log") as server:
        yield server


def login(page, server: Server, username: str, path: str = "/") -> None:
    page.goto(f"{server.url}/login/?next={path}")
    page.get_by_test_id("login-username").fill(username)
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url(lambda url: "/login/" not in url)


def run_async(coroutine):
    """Run ``coroutine`` to its end on an event loop of its own thread.

    Playwright's sync API keeps the session's event loop in the test's thread,
    so ``asyncio.run`` there depends on which spec a worker ran before.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def open_task(browser, server: Server, username: str, task_id: int):
    """A new browser context logged in as ``username`` on a task page with its socket up."""
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    return page


def watched_page(browser, server: Server, username: str, path: str, *, live: str):
    """A new context logged in on ``path`` with its socket (test id ``live``) up.

    It counts htmx's errors (a swap without a target, a failed request) in
    ``window.htmxErrors``, for tests to check that live patches all landed.
    """
    context = browser.new_context()
    context.add_init_script("window.htmxErrors = 0; addEventListener('htmx:error', () => window.htmxErrors++);")
    page = context.new_page()
    login(page, server, username, path)
    expect(page.get_by_test_id(live)).to_have_attribute("data-live", "connected")
    return page


def fresh_task(browser, server: Server, username: str):
    """A task of its own, in a workspace of its own, so tests do not depend on each other."""
    ids = server.create_operator(username, workspace=f"{username}'s", tasks=True)
    return open_task(browser, server, username, ids["task_ids"][0]), ids


def start_agent(page, prompt: str) -> None:
    """Start the task's agent (the Mock agent profile) with ``prompt``."""
    page.get_by_test_id("session-start-prompt").fill(prompt)
    page.get_by_test_id("session-start-submit").click()


def start_scenario(page, scenario: str) -> None:
    """Start the Mock agent on a scenario from ``kandev_web/mock_agent/scenarios/``."""
    start_agent(page, f"/e2e:{scenario}")
