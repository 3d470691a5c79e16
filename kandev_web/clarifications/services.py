"""ask_user_question_kandev bundles: create, answer, wait, and let go when the agent moves on.

Records live in the database so any web process can answer; the agent's
waiting tool call (on whichever process serves it) is woken through the
channel layer and re-reads the record, so a lost wake-up costs a keepalive
interval, never an answer. Everything here is database work; reaching the
agent is ``answering``'s job.
"""

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from kandev_web import live
from kandev_web.db import database_sync_to_async
from kandev_web.sessions import events, workflow
from kandev_web.sessions.models import TaskSession

from . import actions, records
from .models import Clarification, Source, Status
from .reuse import HeldBundle, reusable_bundle
from .settlement import Answerer
from .validation import Answer, dedup_key, parse_answers

logger = logging.getLogger(__name__)

WAIT_TIMEOUT = 2 * 60 * 60


class AlreadyAnswered(Exception):
    """Someone answered first (or the agent withdrew the question)."""


class ClarificationCancelled(Exception):
    """The agent moved on: its turn ended or it disconnected."""


class ClarificationTimedOut(Exception):
    pass


def request_clarification(
    session: TaskSession, questions: Sequence[Mapping[str, Any]], context: str = ""
) -> tuple[Clarification, bool]:
    """Record an ask_user_question_kandev bundle, or return the one it repeats (``reuse``) and False.

    ``questions`` are in the shape the record keeps (``validation.parse_bundle``).

    As with an elicitation, the record is committed and shown first
    (``records.show_overlay``), and the rest of what it brings follows.
    """
    record, created = _create_record(session, questions, context)
    if created:
        records.show_overlay(record)
        records.announce(record)
    return record, created


@transaction.atomic
def _create_record(
    session: TaskSession, questions: Sequence[Mapping[str, Any]], context: str
) -> tuple[Clarification, bool]:
    session = TaskSession.objects.select_for_update().get(pk=session.pk)
    key = dedup_key(questions)
    turn = events.current_turn(session)
    held = {
        record.pending_id: record
        for record in Clarification.objects.filter(
            session=session, source=Source.ASK_USER_QUESTION, status__in=[Status.PENDING, Status.ANSWERED]
        )
    }
    again = reusable_bundle(
        (
            HeldBundle(r.pending_id, r.session_id, r.turn_id, r.dedup_key, r.status, r.agent_disconnected)
            for r in held.values()
        ),
        session_id=session.pk,
        turn_id=turn.pk if turn else None,
        key=key,
    )
    if again is not None:
        return held[again.pending_id], False
    record = Clarification.objects.create(
        pending_id=str(uuid.uuid4()),
        session=session,
        turn=turn,
        source=Source.ASK_USER_QUESTION,
        questions=list(questions),
        context=context,
        dedup_key=key,
    )
    return record, True


def respond(
    pending_id: str,
    *,
    answers: object = None,
    rejected: bool = False,
    reject_reason: str = "",
    answerer: Answerer | None = None,
) -> Clarification:
    """Answer a bundle, first answer wins; raise ``AlreadyAnswered`` or ``InvalidBundle``.

    ``answerer`` (who, from where) goes on the record and its timeline.

    A bundle the agent left behind (``agent_disconnected``) is answered all the
    same, as a record; ``answering`` then tells the agent in a new prompt.
    """
    with transaction.atomic():
        record = Clarification.objects.select_for_update().select_related("session__task").get(pending_id=pending_id)
        if record.status != Status.PENDING:
            raise AlreadyAnswered(pending_id)
        if rejected:
            response = {"rejected": True, "reject_reason": reject_reason.strip() or "User skipped", "answers": []}
        else:
            parsed = parse_answers(record.questions, answers)
            response = {"rejected": False, "answers": [_answer_json(a) for a in parsed]}
        status, reason = (Status.REJECTED, "operator_skipped") if rejected else (Status.ANSWERED, "operator")
        actions.do_settle(record, status, reason, response, answerer=answerer)
        workflow.question_answered(record.session, agent_waiting=not record.agent_disconnected)
        live.wake_clarification(pending_id)
    return record


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
        labels = {o["id"]: o["label"] for o in question.get("options", [])}
        chosen = answer["custom_text"] or ", ".join(labels.get(o, o) for o in answer["selected_options"])
        lines.append(f'You previously asked the user: "{question["prompt"]}". They answered: {chosen}')
    return "\n".join(lines)


@transaction.atomic
def agent_moved_on(session_id: int) -> None:
    """The turn ended or the agent went away: pending questions can no longer reach it."""
    for record in Clarification.objects.select_for_update().filter(
        session_id=session_id, status=Status.PENDING, agent_disconnected=False
    ):
        record.agent_disconnected = True
        record.save(update_fields=["agent_disconnected"])
        records.messages_changed(record)
        live.wake_clarification(record.pending_id)


async def wait_for_answer(
    pending_id: str,
    *,
    timeout: float = WAIT_TIMEOUT,
    keepalive: Callable[[], Awaitable[None]] | None = None,
    interval: float | None = None,
) -> Clarification:
    """Block until the bundle is answered or skipped; keepalive every ``interval`` seconds."""
    interval = settings.KANDEV_MCP_KEEPALIVE_SECONDS if interval is None else interval
    layer = live.channel_layer()
    channel = await layer.new_channel()
    group = live.clarification_group(pending_id)
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
    record = (
        Clarification.objects.select_for_update()
        .select_related("session__task")
        .filter(pending_id=pending_id, status=Status.PENDING)
        .first()
    )
    if record is not None:
        actions.do_settle(record, Status.EXPIRED, "answer_timeout", None)
