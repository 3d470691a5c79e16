"""Liveness, readiness and metrics, as a load balancer and a Prometheus scraper see them."""

import json
import time
import urllib.error
import urllib.request

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from kandev_web.asgi import application
from kandev_web.clarifications import answering, services
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.sessions.models import SessionState, TaskSession, Turn
from testing_support.processes import server_environ, start_daphne, stop_group, wait_for_http
from testing_support.sockets import HOST, Communicator, session_cookie, two_workspaces

BUNDLE = parse_bundle(
    [
        {
            "prompt": "Which database?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
)


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """Every sample of a scrape by name and labels, parsed as Prometheus does."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_healthz_answers_without_a_login(db):
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_answers_without_a_login_when_the_database_and_channel_layer_work(db):
    response = Client().get("/readyz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "channel_layer": "ok"}}


def test_metrics_are_for_superusers_or_a_scraper_with_the_token_and_no_one_else(
    db, superuser_client, operator, settings
):
    anonymous, member = Client(), Client()
    member.force_login(operator)

    assert anonymous.get("/metrics").status_code == 403
    assert member.get("/metrics").status_code == 403
    assert superuser_client.get("/metrics").status_code == 200
    settings.KANDEV_METRICS_TOKEN = "scrape-me"
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").status_code == 200
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer guess").status_code == 403
    assert superuser_client.get("/metrics").status_code == 403  # with a token set, only the token reads them


def test_a_scrape_counts_requests_pending_questions_live_executions_and_answers(superuser_client, make_task):
    session = TaskSession.objects.create(task=make_task("Pick a stack"), state=SessionState.RUNNING)
    Turn.objects.create(session=session)
    record, _ = services.request_clarification(session, BUNDLE, "")
    before = samples(superuser_client.get("/metrics").text)
    superuser_client.get("/no-such-page/")
    async_to_sync(answering.answer)(record, answers=[], rejected=True, reject_reason="why " * 131_072)

    after = samples(superuser_client.get("/metrics").text)

    assert after[("kandev_pending_questions", (("source", "ask_user_question"),))] == 1
    assert after[("kandev_live_executions", ())] == 0
    not_found = ("kandev_http_requests_total", (("method", "GET"), ("status", "4xx")))
    assert after[not_found] == before.get(not_found, 0) + 1
    refused = ("kandev_answer_seconds_count", (("outcome", "invalid"),))
    assert after[refused] == before.get(refused, 0) + 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_open_sockets_are_counted_while_open(superuser_client):
    task, _, alice, _ = await two_workspaces()
    cookie = await session_cookie(alice)
    open_sockets = ("kandev_open_sockets", (("page", "task"),))
    scrape = sync_to_async(lambda: samples(superuser_client.get("/metrics").text))
    before = (await scrape()).get(open_sockets, 0)
    socket = Communicator(
        application, f"/ws/tasks/{task.pk}/", headers=[HOST, (b"origin", b"http://127.0.0.1"), cookie]
    )
    connected, _ = await socket.connect()
    assert connected

    assert (await scrape())[open_sockets] == before + 1
    await socket.disconnect()
    assert (await scrape())[open_sockets] == before


def _serve(tmp_path, **env):
    """A real Daphne with ``env`` over the e2e profile; yields its URL."""
    log = (tmp_path / "server.log").open("w")
    port, process = start_daphne(server_environ(tmp_path / "db.sqlite3", env), output=log)
    wait_for_http(port, process, time.monotonic() + 30)
    return process, f"http://127.0.0.1:{port}"


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


@pytest.mark.parametrize(
    ("env", "down"),
    [
        ({"DATABASE_URL": "postgres://kandev@127.0.0.1:9/kandev"}, "database"),
        # One process on SQLite with Redis is refused at start (kandev.E001, E002) unless said to be fine.
        ({"REDIS_URL": "redis://127.0.0.1:9/0", "KANDEV_SILENCED_CHECKS": "kandev.E001,kandev.E002"}, "channel_layer"),
    ],
    ids=["database stopped", "redis stopped"],
)
def test_readyz_says_not_ready_and_which_dependency_is_down_while_healthz_still_answers(tmp_path, env, down):
    process, url = _serve(tmp_path, **env)
    try:
        status, body = _get(f"{url}/readyz")
        assert status == 503
        assert body["status"] == "unavailable"
        assert body["checks"][down] == "down"
        assert _get(f"{url}/healthz") == (200, {"status": "ok"})
    finally:
        stop_group(process)
