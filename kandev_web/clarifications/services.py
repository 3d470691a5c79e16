"""Clarifications: create, answer, wait, and let go when the agent moves on.

Records live in the database so any web process can answer; the agent's
waiting tool call (on whichever process serves it) is woken through the
channel layer and re-reads the record, so a lost wake-up costs a keepalive
interval, never an answer.
"""

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from kandev_web.board.models import TaskState
from kandev_web.sessions import events
from kandev_web.sessions.models import Message, MessageType, SessionState, TaskSession

from .models import Clarification, Source, Status
from .validation import Answer, Option, Question, dedup_key, parse_answers

logger = logging.getLogger(__name__)

WAIT_TIMEOUT = 2 * 60 * 60


class AlreadyAnswered(Exception):
    """Someone answered first (or the agent withdrew the question)."""


class ClarificationCancelled(Exception):
    """The agent moved on: its turn ended or it disconnected."""


class ClarificationTimedOut(Exception):
    pass


def clarification_group(pending_id: str) -> str:
    return f"clarification-{pending_id}"


def _wake(pending_id: str) -> None:
    group = clarification_group(pending_id)
    transaction.on_commit(lambda: async_to_sync(get_channel_layer().group_send)(group, {"type": "wake"}))


def _question_metadata(record: Clarification, index: int, question: dict) -> dict:
    return {
        "pending_id": record.pending_id,
        "question_id": question["id"],
        "question": question,
        "question_index": index,
        "question_total": len(record.questions),
        "context": record.context,
        "source": record.source,
        "status": record.status,
    }


@transaction.atomic
def request_clarification(
    session: TaskSession, questions: tuple[Question, ...], context: str = ""
) -> tuple[Clarification, bool]:
    """Record an ask_user_question_kandev bundle; the same pending bundle is returned, not repeated."""
    session = TaskSession.objects.select_for_update().select_related("task__board").get(pk=session.pk)
    key = dedup_key(questions)
    for existing in Clarification.objects.filter(
        session=session, source=Source.ASK_USER_QUESTION, status__in=[Status.PENDING, Status.ANSWERED]
    ):
        if existing.dedup_key == key and not existing.agent_disconnected:
            return existing, False
    record = Clarification.objects.create(
        pending_id=str(uuid.uuid4()),
        session=session,
        turn=events.current_turn(session),
        source=Source.ASK_USER_QUESTION,
        questions=[q.as_json() for q in questions],
        context=context,
        dedup_key=key,
    )
    add_question_messages(record)
    session.state = SessionState.WAITING_FOR_INPUT
    session.save(update_fields=["state", "updated_at"])
    task = session.task
    task.state = TaskState.REVIEW
    task.save(update_fields=["state", "updated_at"])
    events.session_changed(session)
    from kandev_web.notifications import services as notifications

    notifications.clarification_requested(record)
    return record, True


def add_question_messages(record: Clarification) -> None:
    """One agent-authored ``clarification_request`` per question; the last one requests input."""
    for index, question in enumerate(record.questions):
        events.add_message(
            record.session,
            type=MessageType.CLARIFICATION_REQUEST,
            content=question["prompt"],
            metadata=_question_metadata(record, index, question),
            requests_input=index == len(record.questions) - 1,
        )


def update_messages(record: Clarification, **changes) -> None:
    for message in Message.objects.select_for_update().filter(
        session=record.session_id, type=MessageType.CLARIFICATION_REQUEST, metadata__pending_id=record.pending_id
    ):
        message.metadata = {**message.metadata, **changes}
        message.save(update_fields=["metadata"])
        events.message_changed(message, created=False)


@dataclass(frozen=True)
class Outcome:
    record: Clarification
    #: The agent had moved on, so the answer went to it as a new prompt (or nowhere).
    resumed: bool = False


def submit(record: Clarification, *, answers: list[dict], rejected: bool, reject_reason: str):
    """The answer fork: an elicitation goes to agentctl first; an ask_user_question bundle is settled here."""
    if record.source == Source.ELICITATION:
        from . import elicitations

        return elicitations.forward(record, answers=answers, rejected=rejected, reject_reason=reject_reason)
    return respond(record.pending_id, answers=answers, rejected=rejected, reject_reason=reject_reason)


def respond(pending_id: str, *, answers: object = None, rejected: bool = False, reject_reason: str = "") -> Outcome:
    """Answer an ask_user_question bundle, first answer wins; raise ``AlreadyAnswered`` or ``InvalidBundle``."""
    with transaction.atomic():
        record = Clarification.objects.select_for_update().select_related("session__task").get(pending_id=pending_id)
        if record.status != Status.PENDING:
            raise AlreadyAnswered(pending_id)
        if rejected:
            response = {"rejected": True, "reject_reason": reject_reason.strip() or "User skipped", "answers": []}
        else:
            parsed = parse_answers(_questions(record), answers)
            response = {"rejected": False, "answers": [_answer_json(a) for a in parsed]}
        updated = Clarification.objects.filter(pk=record.pk, status=Status.PENDING).update(
            status=Status.REJECTED if rejected else Status.ANSWERED, response=response, responded_at=timezone.now()
        )
        if not updated:
            raise AlreadyAnswered(pending_id)
        record.refresh_from_db()
        update_messages(record, status=record.status, response=response)
        session = record.session
        if not record.agent_disconnected and session.state == SessionState.WAITING_FOR_INPUT:
            session.state = SessionState.RUNNING
            session.save(update_fields=["state", "updated_at"])
            session.task.state = TaskState.IN_PROGRESS
            session.task.save(update_fields=["state", "updated_at"])
        events.session_changed(session)
        _wake(pending_id)
    if record.agent_disconnected:
        return Outcome(record, resumed=_resume_with_answer(record))
    return Outcome(record)


def _questions(record: Clarification) -> tuple[Question, ...]:
    return tuple(
        Question(
            q["id"],
            q.get("title", ""),
            q["prompt"],
            tuple(Option(o["option_id"], o["label"], o.get("description", "")) for o in q.get("options", [])),
        )
        for q in record.questions
    )


def _answer_json(answer: Answer) -> dict:
    return {
        "question_id": answer.question_id,
        "selected_options": [answer.selected_option] if answer.selected_option else [],
        "custom_text": answer.custom_text,
    }


def late_answer_prompt(record: Clarification) -> str:
    """What the agent is told in a new turn when the answer came after it moved on."""
    response = record.response or {}
    questions = {q["id"]: q for q in record.questions}
    if response.get("rejected"):
        asked = "; ".join(f'"{q["prompt"]}"' for q in record.questions)
        return f"You previously asked the user: {asked}. They declined to answer."
    lines = []
    for answer in response.get("answers", []):
        question = questions[answer["question_id"]]
        labels = {o["option_id"]: o["label"] for o in question.get("options", [])}
        chosen = answer["custom_text"] or ", ".join(labels.get(o, o) for o in answer["selected_options"])
        lines.append(f'You previously asked the user: "{question["prompt"]}". They answered: {chosen}')
    return "\n".join(lines)


def _resume_with_answer(record: Clarification) -> bool:
    from kandev_web.sessions import services as sessions

    session = TaskSession.objects.get(pk=record.session_id)
    try:
        sessions.send_prompt(session, late_answer_prompt(record))
    except sessions.SessionActionError as error:
        logger.info("late answer for %s recorded but not delivered: %s", record.pending_id, error)
        return False
    return True


@transaction.atomic
def agent_moved_on(session_id: int) -> None:
    """The turn ended or the agent went away: pending questions can no longer reach it."""
    for record in Clarification.objects.select_for_update().filter(
        session_id=session_id, status=Status.PENDING, agent_disconnected=False
    ):
        record.agent_disconnected = True
        record.save(update_fields=["agent_disconnected"])
        update_messages(record, agent_disconnected=True)
        _wake(record.pending_id)


def pending_for_task(task_id: int) -> list[Clarification]:
    """The bundles the task's overlay shows: pending, in the session's current turn or left behind."""
    return list(
        Clarification.objects.filter(session__task_id=task_id, status=Status.PENDING).order_by("created_at", "pk")
    )


async def wait_for_answer(
    pending_id: str,
    *,
    timeout: float = WAIT_TIMEOUT,
    keepalive: Callable[[], Awaitable[None]] | None = None,
    interval: float | None = None,
) -> Clarification:
    """Block until the bundle is answered or skipped; keepalive every ``interval`` seconds."""
    interval = settings.KANDEV_MCP_KEEPALIVE_SECONDS if interval is None else interval
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = clarification_group(pending_id)
    await layer.group_add(group, channel)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while True:
            # Read after subscribing, so an answer between the two is not missed.
            record = await database_sync_to_async(Clarification.objects.get)(pending_id=pending_id)
            if record.status != Status.PENDING:
                return record
            if record.agent_disconnected:
                raise ClarificationCancelled(pending_id)
            remaining = deadline - loop.time()
            if remaining <= 0:
                await database_sync_to_async(_expire)(pending_id)
                raise ClarificationTimedOut(pending_id)
            try:
                async with asyncio.timeout(min(interval, remaining)):
                    await layer.receive(channel)
            except TimeoutError:
                if keepalive is not None and loop.time() < deadline:
                    await keepalive()
    finally:
        await layer.group_discard(group, channel)


@transaction.atomic
def _expire(pending_id: str) -> None:
    if Clarification.objects.filter(pending_id=pending_id, status=Status.PENDING).update(status=Status.EXPIRED):
        record = Clarification.objects.select_related("session__task").get(pending_id=pending_id)
        update_messages(record, status=Status.EXPIRED)
        events.session_changed(record.session)

