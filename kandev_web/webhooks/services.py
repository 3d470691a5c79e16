"""Queueing a workspace's webhook deliveries in the transaction of the event they report.

A delivery row is written with the event, so a rolled-back question sends
nothing and a committed one is sent even if the process stops right after
(the next sender to run picks it up); the sender is woken once it commits.
"""

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from . import payloads
from .models import TEST_EVENT, Event, Webhook, WebhookDelivery

#: How a settled question's status reads in the event it sends: an operator's reply (an answer
#: or a Skip) is "answered"; ending any other way (timed out, cancelled, the agent gone) is "withdrawn".
OPERATOR_STATUSES = frozenset({"answered", "rejected"})


def task_url(task_id: int) -> str:
    """The task page, absolute when the deployment says where it is served (``KANDEV_PUBLIC_URL``)."""
    return settings.KANDEV_PUBLIC_URL.rstrip("/") + reverse("sessions:task", args=[task_id])


def _subject(session) -> payloads.Subject:
    task = session.task
    board = task.board
    return payloads.Subject(
        workspace_id=board.workspace_id,
        workspace_name=board.workspace.name,
        board_id=board.pk,
        board_name=board.name,
        task_id=task.pk,
        task_title=task.title,
        task_url=task_url(task.pk),
        session_id=session.pk,
    )


def _enqueue(webhook: Webhook, event: str, occurrence: str, build) -> WebhookDelivery | None:
    delivery = WebhookDelivery(webhook=webhook, event=event, occurrence=occurrence, next_attempt_at=timezone.now())
    delivery.body = payloads.encode(build(str(delivery.delivery), delivery.next_attempt_at)).decode()
    try:
        with transaction.atomic():
            delivery.save()
    except IntegrityError:
        return None  # this occurrence is already on its way to this webhook
    from .sender import sender

    transaction.on_commit(sender.wake)
    return delivery


def _report(
    session, event: Event, occurrence: str, question: tuple[str, str, str] | None = None, question_mode: str = "form"
) -> None:
    # A workspace has a handful of webhooks: filtering their events here works on every database.
    hooks = Webhook.objects.filter(workspace__boards__tasks=session.task_id, active=True)
    webhooks = [hook for hook in hooks if str(event) in hook.events]
    if not webhooks:
        return
    subject = _subject(session)
    workspace = (subject.workspace_id, subject.workspace_name)
    for webhook in webhooks:
        _enqueue(
            webhook,
            str(event),
            occurrence,
            lambda delivery, at: payloads.build(
                str(event),
                delivery=delivery,
                occurred_at=at,
                subject=subject,
                workspace=workspace,
                question=question,
                question_mode=question_mode,
            ),
        )


def question_asked(record) -> None:
    question = (record.pending_id, record.source, record.status)
    _report(record.session, Event.QUESTION_ASKED, record.pending_id, question, record.mode)


def question_settled(record) -> None:
    event = Event.QUESTION_ANSWERED if record.status in OPERATOR_STATUSES else Event.QUESTION_WITHDRAWN
    _report(record.session, event, record.pending_id, (record.pending_id, record.source, record.status), record.mode)


def turn_finished(session, turn) -> None:
    _report(session, Event.TURN_FINISHED, f"turn-{turn.pk}")


def send_test(webhook: Webhook) -> WebhookDelivery:
    """A test event for ``webhook``, whatever events it hears: each click is an occurrence of its own."""
    workspace = (webhook.workspace_id, webhook.workspace.name)

    def build(delivery, at):
        return payloads.build(TEST_EVENT, delivery=delivery, occurred_at=at, subject=None, workspace=workspace)

    with transaction.atomic():
        delivery = WebhookDelivery(webhook=webhook, event=TEST_EVENT, next_attempt_at=timezone.now())
        delivery.occurrence = str(delivery.delivery)
        delivery.body = payloads.encode(build(str(delivery.delivery), delivery.next_attempt_at)).decode()
        delivery.save()
        from .sender import sender

        transaction.on_commit(sender.wake)
    return delivery


def recent_deliveries(webhook: Webhook, limit: int = 20) -> list[WebhookDelivery]:
    return list(webhook.deliveries.prefetch_related("attempt_log")[:limit])
