"""Webhooks over real HTTP: a local receiver checks the signature and what each event says; failures are retried,
timed out and logged; two senders never send one delivery twice."""

import threading

import pytest
from django.db import connections, transaction

from kandev_web.board.models import Workspace
from kandev_web.clarifications import actions, services
from kandev_web.clarifications.models import Clarification, Status
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.metrics import REGISTRY
from kandev_web.sessions import events
from kandev_web.sessions.models import SessionState, TaskSession, Turn
from kandev_web.webhooks import services as webhooks
from kandev_web.webhooks import signing
from kandev_web.webhooks.models import DeliveryState, Event, Webhook, WebhookDelivery
from kandev_web.webhooks.sender import Sender
from testing_support.fakes import DripReceiver, Listener, Receiver, RedirectingReceiver

pytestmark = pytest.mark.postgres

PROMPT = "Where is the SSN kept?"
QUESTIONS = parse_bundle(
    [{"prompt": PROMPT, "options": [{"label": "Postgres", "description": "x"}, {"label": "Vault", "description": "y"}]}]
)
ALL_EVENTS = [str(event) for event in Event]


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def session(make_task, make_session, operator):
    return make_session(make_task('Ship "it" <now>'))


def make_webhook(workspace, url, events=ALL_EVENTS, **fields):
    hook = Webhook(workspace=workspace, name="Chat", url=url, events=events, **fields)
    hook.set_signing_secret(signing.new_secret())
    hook.save()
    return hook


def test_a_question_asked_then_answered_and_a_turn_finished_reach_the_receiver_signed(
    session, workspace, board, receiver, settings
):
    settings.KANDEV_PUBLIC_URL = "https://kandev.example/"
    hook = make_webhook(workspace, receiver.url)
    record, _ = services.request_clarification(session, QUESTIONS, "a secret context")
    assert Sender().run_once() == 1
    services.respond(record.pending_id, answers=[{"question_id": "q1", "selected_options": ["q1_opt1"]}])
    Sender().run_once()
    events.record_turn_completed(session.pk, {"stop_reason": "end_turn"})
    Sender().run_once()

    asked, answered, finished = receiver.verified(hook.signing_secret())
    assert [asked["event"], answered["event"], finished["event"]] == [
        "question.asked",
        "question.answered",
        "turn.finished",
    ]
    task = session.task
    for payload in (asked, answered, finished):
        assert payload["workspace"] == {"id": workspace.pk, "name": "Platform"}
        assert payload["board"] == {"id": board.pk, "name": "Main"}
        assert payload["task"] == {
            "id": task.pk,
            "title": 'Ship "it" <now>',
            "url": f"https://kandev.example/tasks/{task.pk}/",
        }
        assert payload["session"] == {"id": session.pk}
    assert asked["question"] == {"id": record.pending_id, "source": "ask_user_question", "status": "pending"}
    assert answered["question"] == {"id": record.pending_id, "source": "ask_user_question", "status": "answered"}
    assert "question" not in finished
    for item in receiver.received:
        for secret_text in (PROMPT.encode(), b"a secret context", b"Postgres"):
            assert secret_text not in item.body
    assert len({p["delivery"] for p in (asked, answered, finished)}) == 3
    assert set(WebhookDelivery.objects.values_list("state", flat=True)) == {DeliveryState.DELIVERED}


def test_a_question_that_ends_unanswered_is_withdrawn_and_each_occurrence_is_sent_once(session, workspace, receiver):
    hook = make_webhook(workspace, receiver.url, events=["question.withdrawn", "turn.finished"])
    record, _ = services.request_clarification(session, QUESTIONS)
    with transaction.atomic():
        record = Clarification.objects.select_for_update().get(pk=record.pk)
        actions.do_settle(record, Status.EXPIRED, "answer_timeout", None)
    turn = session.turns.get()
    webhooks.turn_finished(session, turn)
    webhooks.turn_finished(session, turn)
    Sender().run_once()
    Sender().run_once()
    payloads = receiver.verified(hook.signing_secret())
    assert [(p["event"], p.get("question", {}).get("status")) for p in payloads] == [
        ("question.withdrawn", "expired"),
        ("turn.finished", None),
    ]


def test_events_not_chosen_and_switched_off_webhooks_send_nothing(session, workspace, receiver):
    make_webhook(workspace, receiver.url, events=["turn.finished"])
    make_webhook(workspace, receiver.url, active=False)
    services.request_clarification(session, QUESTIONS)
    Sender().run_once()
    assert receiver.received == []
    assert WebhookDelivery.objects.count() == 0


def test_a_failing_receiver_is_retried_with_the_same_delivery_and_the_log_shows_both_attempts(
    session, workspace, receiver, settings
):
    settings.KANDEV_WEBHOOK_BACKOFF_SECONDS = [0.0, 0.0]
    receiver.statuses = [500, 200]
    hook = make_webhook(workspace, receiver.url)
    webhooks.turn_finished(session, session.turns.get())
    Sender().run_once()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts, delivery.last_status, delivery.last_error) == (
        DeliveryState.PENDING,
        1,
        500,
        "HTTP 500",
    )
    Sender().run_once()
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.last_status, delivery.last_error) == (
        DeliveryState.DELIVERED,
        2,
        200,
        "",
    )
    first, second = receiver.verified(hook.signing_secret())
    assert first == second  # the same delivery id and body: the receiver can drop the repeat
    assert list(delivery.attempt_log.values_list("number", "status", "error")) == [(1, 500, "HTTP 500"), (2, 200, "")]


def test_a_receiver_that_fails_every_time_is_given_up_after_the_last_backoff(session, workspace, receiver, settings):
    settings.KANDEV_WEBHOOK_BACKOFF_SECONDS = [0.0]
    receiver.statuses = [503]
    make_webhook(workspace, receiver.url)
    webhooks.turn_finished(session, session.turns.get())
    for _ in range(3):
        Sender().run_once()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts, delivery.next_attempt_at) == (DeliveryState.FAILED, 2, None)
    assert len(receiver.received) == 2


def test_a_receiver_that_hangs_times_out_and_is_tried_again_later(session, workspace, receiver, settings):
    settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS = 0.5
    settings.KANDEV_WEBHOOK_BACKOFF_SECONDS = [10.0]
    receiver.statuses = [0]
    make_webhook(workspace, receiver.url)
    webhooks.turn_finished(session, session.turns.get())
    Sender().run_once()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.attempts, delivery.last_status) == (DeliveryState.PENDING, 1, None)
    assert delivery.last_error == "timed out after 0.5 s"
    assert delivery.next_attempt_at > delivery.attempt_log.get().at
    assert Sender().run_once() == 0  # not due for ten seconds


def test_a_delivery_one_sender_holds_is_not_sent_by_another(session, workspace, receiver):
    make_webhook(workspace, receiver.url)
    webhooks.turn_finished(session, session.turns.get())
    first, second = Sender("first"), Sender("second")
    pk = WebhookDelivery.objects.get().pk
    assert first.claim(pk)
    assert not second.claim(pk)
    assert second.run_once() == 0
    first.attempt(pk)
    assert second.run_once() == 0
    assert len(receiver.received) == 1


@pytest.mark.postgres_only
def test_two_senders_racing_over_many_deliveries_send_each_once(transactional_db, workspace, make_task, receiver):
    make_webhook(workspace, receiver.url)
    for n in range(12):
        session = TaskSession.objects.create(task=make_task(f"Task {n}"), state=SessionState.RUNNING)
        webhooks.turn_finished(session, Turn.objects.create(session=session))
    start = threading.Barrier(2)

    def run(sender):
        start.wait()
        try:
            sender.run_once()
        finally:
            connections.close_all()  # this thread's own connection, or PostgreSQL keeps the test database busy

    threads = [threading.Thread(target=run, args=(Sender(name),)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [item.headers["webhook-id"] for item in receiver.received]
    assert len(ids) == 12 == len(set(ids))
    assert WebhookDelivery.objects.filter(state=DeliveryState.DELIVERED, attempts=1).count() == 12


def test_a_secret_no_key_opens_is_not_sent_unsigned_but_logged_and_retried(session, workspace, receiver):
    hook = make_webhook(workspace, receiver.url)
    Webhook.objects.filter(pk=hook.pk).update(secret="not-a-token")
    webhooks.turn_finished(session, session.turns.get())
    Sender().run_once()
    delivery = WebhookDelivery.objects.get()
    assert receiver.received == []
    assert (delivery.state, delivery.attempts) == (DeliveryState.PENDING, 1)
    assert delivery.last_error == "its signing secret does not open with KANDEV_SECRETS_KEY"


# -- the way out: guarded, deadlined, one receiver cannot hold up another -----------------------------


def _count(outcome: str) -> float:
    return REGISTRY.get_sample_value("kandev_webhook_deliveries_total", {"outcome": outcome}) or 0.0


def test_a_webhook_to_this_machine_is_refused_without_connecting_and_logged_without_details(
    session, workspace, settings
):
    settings.KANDEV_OUTGOING_ALLOW_PRIVATE = False
    listener = Listener()
    refused_before = _count("refused")
    try:
        make_webhook(workspace, f"http://localhost:{listener.port}/hook")
        webhooks.turn_finished(session, session.turns.get())
        Sender().run_once()
        assert not listener.was_reached()
    finally:
        listener.close()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.last_status, delivery.last_error) == (
        DeliveryState.PENDING,
        None,
        "refused: not a public address",
    )
    assert _count("refused") == refused_before + 1


def test_a_redirect_is_a_failed_attempt_and_the_redirect_target_hears_nothing(session, workspace, receiver):
    redirecting = RedirectingReceiver(to=receiver.url)
    try:
        make_webhook(workspace, redirecting.origin + "/hook")
        webhooks.turn_finished(session, session.turns.get())
        Sender().run_once()
    finally:
        redirecting.close()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.last_status, delivery.last_error) == (307, "HTTP 307: a redirect, not followed")
    assert len(redirecting.received) == 1
    assert receiver.received == []


def test_a_dripping_receiver_is_cut_at_the_deadline_and_retried(session, workspace, settings):
    settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS = 1.0
    drip = DripReceiver(interval=0.25)
    try:
        make_webhook(workspace, drip.url)
        webhooks.turn_finished(session, session.turns.get())
        Sender().run_once()
        assert drip.cut.wait(5)
    finally:
        drip.close()
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.last_error) == (DeliveryState.PENDING, "timed out after 1 s")
    assert not drip.finished.is_set()  # a read timeout alone would have waited out every byte
    assert delivery.attempt_log.get().duration_ms < drip.seconds * 1000 / 2


def test_a_dripping_receiver_in_one_workspace_does_not_delay_another_workspaces_delivery(workspace, receiver, settings):
    settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS = 2.0
    drip = DripReceiver(interval=0.25)
    other = Workspace.objects.create(name="Elsewhere")
    try:
        slow = make_webhook(other, drip.url)
        webhooks.send_test(slow)  # queued first: the old sender would have waited on it
        fast = make_webhook(workspace, receiver.url)
        webhooks.send_test(fast)
        assert Sender().run_once() == 2
        assert drip.requested.is_set()
    finally:
        drip.close()
    (received,) = receiver.received
    assert received.at < drip.requested_at + 1.0  # while the slow one was still dripping
    assert WebhookDelivery.objects.get(webhook=fast).state == DeliveryState.DELIVERED
    assert WebhookDelivery.objects.get(webhook=slow).last_error == "timed out after 2 s"


def test_delivery_outcomes_and_the_process_are_on_the_metrics_page(session, workspace, receiver, superuser_client):
    delivered_before = _count("delivered")
    make_webhook(workspace, receiver.url)
    webhooks.turn_finished(session, session.turns.get())
    Sender().run_once()
    assert _count("delivered") == delivered_before + 1
    page = superuser_client.get("/metrics").content.decode()
    assert 'kandev_webhook_deliveries_total{outcome="delivered"}' in page
    assert "kandev_push_deliveries_total" in page
    for collector in (
        "process_resident_memory_bytes",
        "process_open_fds",
        "python_info",
        "python_gc_objects_collected",
    ):
        assert collector in page
