"""Web Push: what a push says, who may subscribe a browser, and pushes reaching a push service over a socket.

The push service is testing_support/fakes.py: it verifies each
push's VAPID signature with the key the settings page hands browsers and
decrypts it with the fake browser's key, as a browser vendor's would.
"""

import json
import logging
import os
import stat
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.board.models import Board, Task, Workspace
from kandev_web.clarifications.models import Clarification, Mode, Source
from kandev_web.metrics import REGISTRY
from kandev_web.notifications import services, vapid, webpush
from kandev_web.notifications.models import Delivery, Event, PushSubscription
from kandev_web.notifications.push_sender import WEB_PUSH, PushSender
from kandev_web.notifications.services import MAX_SUBSCRIPTIONS
from kandev_web.sessions.models import SessionState, TaskSession, Turn
from testing_support.fakes import DripReceiver, FakeBrowser, Listener, PushService, RedirectingReceiver

QUESTION = "Which database should I use for the secret ledger?"


@pytest.fixture(autouse=True)
def own_vapid_key(settings, tmp_path):
    """Each test generates the deployment's key afresh, in a var directory of its own."""
    settings.VAR_DIR = tmp_path
    settings.KANDEV_VAPID_PRIVATE_KEY = ""
    vapid.key.cache_clear()
    yield
    vapid.key.cache_clear()


@pytest.fixture
def push_service():
    service = PushService()
    yield service
    service.close()


def _ask(make_task, title='Ship <b>it</b> & "go"'):
    return _ask_on(make_task(title))


def _ask_on(task):
    session = TaskSession.objects.create(task=task, state=SessionState.RUNNING)
    Turn.objects.create(session=session)
    return Clarification.objects.create(
        pending_id=str(uuid.uuid4()), session=session, questions=[{"question": QUESTION, "options": []}]
    )


def _subscribe(user, endpoint: str, browser: FakeBrowser) -> None:
    services.subscribe(user, webpush.parse_subscription(browser.subscription(endpoint), allow_http=True))


# -- what a push says ------------------------------------------------------------------------------


@given(st.text())
def test_a_push_names_any_task_title_as_one_bounded_line_of_plain_text(task_title):
    payload = webpush.build(
        title="Agent needs your answer",
        body='The agent asked a question on "%(title)s".',
        task_title=task_title,
        url="/tasks/7/",
        tag="kandev-x",
    )
    assert set(payload) == {"title", "body", "url", "tag"}
    assert len(payload["body"]) <= webpush.BODY_CHARS
    assert len(webpush.encode(payload)) <= webpush.PAYLOAD_BYTES
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029\u202e\u2066" for c in payload["body"])
    assert payload["url"] == "/tasks/7/"
    shown = webpush.plain(task_title, webpush.TASK_TITLE_CHARS)
    assert shown.removesuffix("…") in payload["body"]
    assert json.loads(webpush.encode(payload)) == payload


def test_markup_in_a_task_title_stays_literal_text_and_a_long_one_is_cut():
    payload = webpush.build(
        title="T", body="On %(title)s", task_title="<img src=x onerror=alert(1)>\n\u202eevil", url="/", tag="t"
    )
    assert payload["body"] == "On <img src=x onerror=alert(1)> evil"
    long = webpush.build(title="T", body="%(title)s", task_title="x" * 1000, url="/", tag="t")["body"]
    assert len(long) == webpush.TASK_TITLE_CHARS
    assert long.endswith("…")


def test_only_a_browsers_subscription_shape_is_taken():
    good = FakeBrowser().subscription("https://push.example.com/send/abc")
    parsed = webpush.parse_subscription(good, allow_http=False)
    assert parsed.endpoint == good["endpoint"]
    assert parsed.auth == good["keys"]["auth"]
    assert webpush.parse_subscription({**good, "endpoint": "http://push.example.com/x"}, allow_http=False) is None
    assert webpush.parse_subscription({**good, "endpoint": "http://127.0.0.1:9/x"}, allow_http=True) is not None
    assert webpush.parse_subscription({**good, "endpoint": "javascript:alert(1)"}, allow_http=True) is None
    assert webpush.parse_subscription({**good, "keys": {"p256dh": "AAAA", "auth": "AAAA"}}, allow_http=True) is None
    assert webpush.parse_subscription(["no"], allow_http=True) is None


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_anything_a_page_posts_is_a_subscription_or_refused_never_an_error(data):
    assert webpush.parse_subscription(data, allow_http=True) is None or isinstance(data, dict)


# -- the deployment's key --------------------------------------------------------------------------


def test_the_vapid_key_is_generated_once_and_kept(settings, tmp_path):
    first = vapid.public_key()
    path = tmp_path / vapid.KEY_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    vapid.key.cache_clear()
    assert vapid.public_key() == first  # a restarted process subscribes browsers with the same key


def test_a_vapid_key_named_in_the_settings_wins(settings, tmp_path):
    made = vapid.key().private_pem().decode()
    expected = vapid.public_key()
    (tmp_path / vapid.KEY_FILE).unlink()
    settings.KANDEV_VAPID_PRIVATE_KEY = made
    vapid.key.cache_clear()
    assert vapid.public_key() == expected
    assert not (tmp_path / vapid.KEY_FILE).exists()


# -- subscribing a browser -------------------------------------------------------------------------


def test_the_settings_page_offers_push_with_the_deployments_key(operator_client):
    page = operator_client.get("/settings/notifications/").text
    assert 'data-testid="push-notifications"' in page
    assert f'data-vapid-key="{vapid.public_key()}"' in page


def test_a_subscription_belongs_to_the_operator_who_posted_it(operator_client, operator, make_operator, workspace):
    subscription = FakeBrowser().subscription("https://push.example.com/send/one")
    response = operator_client.post("/settings/notifications/push/", subscription, content_type="application/json")
    assert response.status_code == 201
    assert list(PushSubscription.objects.values_list("user", "endpoint")) == [(operator.pk, subscription["endpoint"])]

    other = Client()
    other.force_login(make_operator("bob", workspace=workspace))
    body = {"endpoint": subscription["endpoint"]}
    assert other.post("/settings/notifications/push/remove/", body, content_type="application/json").status_code == 204
    assert PushSubscription.objects.filter(user=operator).count() == 1  # not bob's to remove

    assert (
        operator_client.post("/settings/notifications/push/remove/", body, content_type="application/json").status_code
        == 204
    )
    assert not PushSubscription.objects.exists()


def test_an_endpoint_someone_else_registered_is_not_taken_over_nor_its_owner_told(
    operator_client, operator, make_operator, workspace
):
    subscription = FakeBrowser().subscription("https://push.example.com/send/alices")
    assert (
        operator_client.post("/settings/notifications/push/", subscription, content_type="application/json").status_code
        == 201
    )

    mallory = Client()
    mallory.force_login(make_operator("mallory", workspace=Workspace.objects.create(name="Elsewhere")))
    other_keys = FakeBrowser().subscription(subscription["endpoint"])
    response = mallory.post("/settings/notifications/push/", other_keys, content_type="application/json")
    assert response.status_code == 409
    assert "alice" not in response.content.decode()
    (kept,) = PushSubscription.objects.all()
    assert (kept.user, kept.p256dh) == (operator, subscription["keys"]["p256dh"])

    again = operator_client.post("/settings/notifications/push/", other_keys, content_type="application/json")
    assert again.status_code == 201  # the owner's own browser, with new keys
    assert PushSubscription.objects.get().p256dh == other_keys["keys"]["p256dh"]


def test_an_operator_keeps_at_most_the_newest_subscriptions(operator_client, operator):
    endpoints = [f"https://push.example.com/send/{n}" for n in range(MAX_SUBSCRIPTIONS + 2)]
    for endpoint in endpoints:
        subscription = FakeBrowser().subscription(endpoint)
        response = operator_client.post("/settings/notifications/push/", subscription, content_type="application/json")
        assert response.status_code == 201
    kept = set(PushSubscription.objects.filter(user=operator).values_list("endpoint", flat=True))
    assert kept == set(endpoints[-MAX_SUBSCRIPTIONS:])  # the two oldest dropped


def test_a_bad_subscription_is_refused(operator_client):
    assert (
        operator_client.post("/settings/notifications/push/", "nope", content_type="application/json").status_code
        == 400
    )
    bad = {"endpoint": "https://push.example.com/x", "keys": {"p256dh": "x", "auth": "y"}}
    assert (
        operator_client.post("/settings/notifications/push/", bad, content_type="application/json").status_code == 400
    )
    assert not PushSubscription.objects.exists()


def test_subscribing_needs_a_login_and_the_csrf_token(operator):
    subscription = FakeBrowser().subscription("https://push.example.com/send/two")
    anonymous = Client().post("/settings/notifications/push/", subscription, content_type="application/json")
    assert anonymous.status_code == 302
    assert "/login/" in anonymous["Location"]
    forged = Client(enforce_csrf_checks=True)
    forged.force_login(operator)
    assert (
        forged.post("/settings/notifications/push/", subscription, content_type="application/json").status_code == 403
    )
    assert not PushSubscription.objects.exists()


def test_the_service_worker_is_served_from_the_root(operator_client):
    response = operator_client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Service-Worker-Allowed"] == "/"
    assert b"notificationclick" in response.content


# -- pushes over a socket --------------------------------------------------------------------------


def test_a_question_is_pushed_once_to_each_browser_naming_the_task_not_the_question(
    operator, make_task, push_service, django_capture_on_commit_callbacks
):
    browser = FakeBrowser()
    endpoint = push_service.endpoint("alice")
    _subscribe(operator, endpoint, browser)
    clarification = _ask(make_task)
    with django_capture_on_commit_callbacks(execute=True):
        services.clarification_requested(clarification)
        services.clarification_requested(clarification)  # reported again: still one push
    assert push_service.received == []  # queued, not sent in the caller's thread

    assert PushSender().run_once() == 1
    assert PushSender().run_once() == 0
    (push,) = push_service.pushes_to(endpoint)
    push.vapid_claims(vapid.public_key(), endpoint)
    assert push.headers["ttl"] == "3600"
    payload = push.decrypt(browser)
    task = clarification.session.task
    assert payload == {
        "title": "Agent needs your answer",
        "body": 'The agent asked a question on "Ship <b>it</b> & "go"".',
        "url": f"/tasks/{task.pk}/",
        "tag": f"kandev-{clarification.pending_id}",
    }
    assert QUESTION not in push.decrypt(browser).values()
    assert QUESTION.encode() not in push.body
    delivery = Delivery.objects.get(provider=WEB_PUSH)
    assert (delivery.user, delivery.occurrence, delivery.pending) == (operator, clarification.pending_id, False)


def test_a_page_to_open_is_pushed_as_such_never_with_its_address_or_message(
    operator, make_task, push_service, django_capture_on_commit_callbacks
):
    browser = FakeBrowser()
    endpoint = push_service.endpoint("alice")
    _subscribe(operator, endpoint, browser)
    session = TaskSession.objects.create(task=make_task("Deploy"), state=SessionState.RUNNING)
    clarification = Clarification.objects.create(
        pending_id=str(uuid.uuid4()),
        session=session,
        source=Source.ELICITATION,
        mode=Mode.URL,
        url="https://auth.example.test/authorize?code=s3cr3t",
        context="Please authorize keysrv in your browser.",
        questions=[],
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.clarification_requested(clarification)

    assert PushSender().run_once() == 1
    (push,) = push_service.pushes_to(endpoint)
    assert push.decrypt(browser) == {
        "title": "Agent asks you to open a page",
        "body": 'The agent on "Deploy" asks you to open a page.',
        "url": f"/tasks/{session.task_id}/",
        "tag": f"kandev-{clarification.pending_id}",
    }


def test_a_gone_browser_is_forgotten_and_a_failing_one_does_not_stop_the_others(
    operator, make_task, push_service, caplog, django_capture_on_commit_callbacks
):
    gone, failing, fine = FakeBrowser(), FakeBrowser(), FakeBrowser()
    _subscribe(operator, push_service.endpoint("gone-secret-token", 410), gone)
    _subscribe(operator, push_service.endpoint("failing-secret-token", 500), failing)
    _subscribe(operator, fine_endpoint := push_service.endpoint("fine"), fine)
    clarification = _ask(make_task, "Quiet task")
    with django_capture_on_commit_callbacks(execute=True):
        services.clarification_requested(clarification)
    with caplog.at_level(logging.INFO, logger="kandev_web.notifications"):
        PushSender().run_once()

    assert len(push_service.received) == 3
    assert (
        push_service.pushes_to(fine_endpoint)[0].decrypt(fine)["body"] == 'The agent asked a question on "Quiet task".'
    )
    assert sorted(PushSubscription.objects.values_list("endpoint", flat=True)) == sorted(
        [push_service.endpoint("failing-secret-token", 500), fine_endpoint]
    )
    assert "HTTP 500" in caplog.text
    assert "gone (HTTP 410)" in caplog.text
    assert "secret-token" not in caplog.text
    assert "Quiet task" not in caplog.text


def test_an_unreachable_push_service_is_logged_without_its_address(operator, make_task, caplog):
    _subscribe(operator, "http://127.0.0.1:9/push/private-token", FakeBrowser())
    with caplog.at_level(logging.INFO, logger="kandev_web.notifications"):
        services.clarification_requested(_ask(make_task))
        PushSender().run_once()
    assert "failed: no answer" in caplog.text
    assert "private-token" not in caplog.text
    assert not Delivery.objects.filter(provider=WEB_PUSH, pending=True).exists()


def test_an_operator_who_turned_questions_off_gets_no_push(operator, make_task, push_service):
    _subscribe(operator, endpoint := push_service.endpoint("off"), FakeBrowser())
    services.set_enabled(operator, Event.CLARIFICATION_REQUESTED, False)
    services.clarification_requested(_ask(make_task))
    assert PushSender().run_once() == 0
    assert not Delivery.objects.exists()
    assert push_service.pushes_to(endpoint) == []


def test_a_push_queued_longer_ago_than_its_ttl_is_dropped_unsent(operator, make_task, push_service):
    _subscribe(operator, endpoint := push_service.endpoint("late"), FakeBrowser())
    services.clarification_requested(_ask(make_task))
    Delivery.objects.filter(provider=WEB_PUSH).update(created_at=timezone.now() - timedelta(hours=2))
    assert PushSender().run_once() == 1
    assert push_service.pushes_to(endpoint) == []
    assert not Delivery.objects.filter(pending=True).exists()


def test_an_operator_without_a_subscribed_browser_queues_nothing(operator, make_task):
    services.clarification_requested(_ask(make_task))
    assert list(Delivery.objects.values_list("provider", flat=True)) == ["in_app"]


# -- the way out: guarded, deadlined, one push service cannot hold up another ------------------------


def _count(outcome: str) -> float:
    return REGISTRY.get_sample_value("kandev_push_deliveries_total", {"outcome": outcome}) or 0.0


def _question_pushed(make_task, django_capture_on_commit_callbacks, title="Quiet task"):
    with django_capture_on_commit_callbacks(execute=True):
        services.clarification_requested(_ask(make_task, title))


def test_a_push_endpoint_on_this_machine_is_refused_without_connecting(
    operator, make_task, settings, caplog, django_capture_on_commit_callbacks
):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = False
    listeners = [Listener(), Listener()]
    refused_before = _count("refused")
    try:
        _subscribe(operator, f"https://127.0.0.1:{listeners[0].port}/push/a", FakeBrowser())
        _subscribe(operator, f"http://localhost:{listeners[1].port}/push/b", FakeBrowser())
        _question_pushed(make_task, django_capture_on_commit_callbacks)
        with caplog.at_level(logging.INFO, logger="kandev_web.notifications"):
            assert PushSender().run_once() == 1
        assert not any(listener.was_reached() for listener in listeners)
    finally:
        for listener in listeners:
            listener.close()
    assert caplog.text.count("refused: not a public address") == 2
    assert str(listeners[0].port) not in caplog.text
    assert _count("refused") == refused_before + 2


def test_a_redirecting_push_endpoint_is_not_followed(
    operator, make_task, push_service, caplog, django_capture_on_commit_callbacks
):
    target = push_service.endpoint("where-the-redirect-points")
    redirecting = RedirectingReceiver(to=target)
    try:
        _subscribe(operator, redirecting.origin + "/push/redirecting", FakeBrowser())
        _question_pushed(make_task, django_capture_on_commit_callbacks)
        with caplog.at_level(logging.INFO, logger="kandev_web.notifications"):
            PushSender().run_once()
    finally:
        redirecting.close()
    assert len(redirecting.received) == 1
    assert push_service.received == []
    assert "HTTP 307: a redirect, not followed" in caplog.text


def test_a_dripping_endpoint_of_one_operator_does_not_delay_another_workspaces_push(
    operator, make_task, make_operator, push_service, settings, caplog, django_capture_on_commit_callbacks
):
    settings.KANDEV_PUSH_TIMEOUT_SECONDS = 2.0
    elsewhere = Workspace.objects.create(name="Elsewhere")
    board = Board.objects.create(workspace=elsewhere, name="Theirs")
    board.add_default_steps()
    mallory = make_operator("mallory", workspace=elsewhere)
    drip = DripReceiver(interval=0.25)
    try:
        _subscribe(mallory, drip.url, FakeBrowser())
        theirs = Task.objects.create(board=board, step=board.steps.first(), title="Their task")
        with django_capture_on_commit_callbacks(execute=True):
            services.clarification_requested(_ask_on(theirs))  # queued first
        _subscribe(operator, fine := push_service.endpoint("alice"), FakeBrowser())
        _question_pushed(make_task, django_capture_on_commit_callbacks)
        with caplog.at_level(logging.INFO, logger="kandev_web.notifications"):
            assert PushSender().run_once() == 2
        assert drip.requested.is_set()
    finally:
        drip.close()
    (push,) = push_service.pushes_to(fine)
    assert push.at < drip.requested_at + 1.0  # while the dripping endpoint was still dripping
    assert "timed out after 2 s" in caplog.text
    assert not drip.finished.is_set()


def test_push_outcomes_are_counted(operator, make_task, push_service, django_capture_on_commit_callbacks):
    delivered, gone = _count("delivered"), _count("gone")
    _subscribe(operator, push_service.endpoint("fine"), FakeBrowser())
    _subscribe(operator, push_service.endpoint("gone", 410), FakeBrowser())
    _question_pushed(make_task, django_capture_on_commit_callbacks)
    PushSender().run_once()
    assert (_count("delivered"), _count("gone")) == (delivered + 1, gone + 1)
