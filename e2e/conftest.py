"""Browser tests against a real ASGI server.

Each test module gets its own Daphne subprocess on a free port, with a fresh
SQLite database copied from a once-migrated template and the module's own
environment: a module sets ``SERVER_ENV = {"KANDEV_FEATURES_…": "true"}`` the
way Kandev's e2e specs restart their backend per spec. Inherited
``KANDEV_FEATURES_*`` variables are stripped so no flag leaks in.

Every browser context a test opens is watched for Content-Security-Policy
violations (``browser`` below): a test whose pages broke the policy fails.
The steps the specs share are in ``testing_support.browser``.

Pages open in Debian's chromium-headless-shell; a module that needs the whole
browser (notifications, for Web Push) sets ``FULL_CHROMIUM = True``.
"""

import os
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from playwright.sync_api import expect

from testing_support.browser import QUIET, CspWatchedBrowser
from testing_support.fixtures import copy_database
from testing_support.processes import CHROMIUM, CHROMIUM_ARGS, HEADLESS_SHELL, git, running_server, server_environ

# Every expectation waits for a state; its timeout only says when to give up on it.
# Playwright's 5 s is shorter than a slow moment of two cores running two browsers,
# their servers and agents at once (an agent's question took longer to reach the
# overlay on a loaded clean-clone run), and giving up later costs a passing spec nothing.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": HEADLESS_SHELL, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def full_chromium(browser_type, browser_type_launch_args):
    """The whole chromium, launched for the first module that sets ``FULL_CHROMIUM = True``.

    The headless shell the other specs run in grants no notifications, so a
    service worker there cannot show what a push brings.
    """
    browser = browser_type.launch(**{**browser_type_launch_args, "executable_path": CHROMIUM})
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """pytest-playwright's own ``page`` and ``context`` quiet too (``testing_support.browser.QUIET``)."""
    return {**browser_context_args, **QUIET}


@pytest.fixture
def browser(request, browser):
    """The session's browser, failing the test at teardown if any page broke the CSP."""
    if getattr(request.module, "FULL_CHROMIUM", False):
        browser = request.getfixturevalue("full_chromium")
    watched = CspWatchedBrowser(browser)
    yield watched
    watched.close_contexts()
    assert watched.violations == [], "Content-Security-Policy violations:\n" + "\n".join(watched.violations)


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


@pytest.fixture(scope="module")
def fresh_database(migrated_database, tmp_path_factory) -> Path:
    return copy_database(migrated_database, tmp_path_factory.mktemp("e2e-db"))


@pytest.fixture(scope="module")
def server(request, fresh_database):
    env = server_environ(fresh_database, getattr(request.module, "SERVER_ENV", {}))
    with running_server(env, fresh_database.parent / "server.log") as server:
        yield server
