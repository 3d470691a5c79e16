"""Several machines' profile: PostgreSQL, Redis, two web processes.

The operator's tab on one process answers an elicitation whose agent stream
the other process holds; exactly one answer reaches the agent, and the other
process's tabs follow live.
"""

import os
import subprocess
import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from playwright.sync_api import expect

from .conftest import ROOT, login, running_server, server_environ
from .elicitation_support import agent_said, option, start


@pytest.fixture(scope="module")
def postgres_url(tmp_path_factory):
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


@pytest.fixture(scope="module")
def servers(postgres_url, redis_url, tmp_path_factory):
    logs = tmp_path_factory.mktemp("scale-out")
    env = server_environ(logs / "unused.sqlite3", {
        "DATABASE_URL": postgres_url,
        "REDIS_URL": redis_url,
        "KANDEV_CHANNEL_PREFIX": f"scale-{uuid.uuid4().hex[:8]}",
        "KANDEV_FEATURES_ACP_ELICITATION": "true",
    })
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with running_server(env, logs / "a.log") as a, running_server(env, logs / "b.log") as b:
        yield a, b


def test_an_answer_through_the_other_process_reaches_the_agent_once(browser, servers):
    a, b = servers
    ids = a.create_operator("scaler", workspace="Scale", tasks=True)
    task = f"/tasks/{ids['task_ids'][0]}/"
    on_a = browser.new_context().new_page()
    login(on_a, a, "scaler", task)
    on_b = browser.new_context().new_page()
    login(on_b, b, "scaler", task)
    expect(on_b.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")

    start(on_a, "elicit-single")  # process A spawns agentctl and holds its stream
    for page in (on_a, on_b):
        expect(page.get_by_test_id("clarification-overlay")).to_be_visible()

    option(on_b, "Red").click()
    with on_b.expect_response(lambda r: "/respond/" in r.url) as answered:
        on_b.get_by_test_id("clarification-submit").click()
    assert answered.value.status == 204
    # A's tab follows live.
    expect(on_a.get_by_test_id("clarification-overlay")).to_have_count(0)
    for page in (on_a, on_b):
        assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Red"}}
        expect(page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="Answer:")).to_have_count(1)
        expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
