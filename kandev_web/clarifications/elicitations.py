"""Clarifications backed by an ACP elicitation, which agentctl holds.

agentctl announces a pending elicitation and settles it; this module mirrors
the announcement onto a clarification record (with agentctl's ``pending_id``
verbatim, never deduplicated: D4, AC-60), hands the settlement to
``actions``, and forwards every operator answer to agentctl *first*, with no
local already-answered short cut (AC-61): whether an answer counts is decided
in one place, the process holding the ACP request, and the record is settled
in one place, the process owning its stream.
"""

import asyncio
import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _

from kandev_web.agentctl.stream_client import AgentStreamNotConnected, NotFound, StreamError, ValidationFailed
from kandev_web.db import database_sync_to_async
from kandev_web.flags.registry import ACP_ELICITATION
from kandev_web.sessions import events
from kandev_web.sessions.models import AgentExecution, AuthorType, MessageType, TaskSession
from kandev_web.sessions.routing import Endpoint
from kandev_web.sessions.runner import runner

from . import actions, records, url_mode
from . import problems as answer_problems
from .delivery import Delivery, Outcome
from .models import Clarification, Source, Status
from .settlement import Answerer

logger = logging.getLogger(__name__)


def record_requested(execution_id: int, session_id: int, payload: dict) -> Clarification | None:
    """Mirror an elicitation agentctl announced; ``None`` when it is known already (announced again after a reconnect).

    Two transactions: the record, which makes the question answerable and is
    shown at once (``records.show_overlay``), then the rest of what it brings.
    """
    record, created, alone = _create_record(execution_id, session_id, payload)
    if created:
        records.show_overlay(record, pending=[record] if alone else None)
    records.announce(record)
    return record if created else None


def _create_record(execution_id: int, session_id: int, payload: dict) -> tuple[Clarification, bool, bool]:
    """The record, whether it is new, and whether it is its task's only pending question."""
    try:
        record, alone = _insert_record(execution_id, session_id, payload)
    except IntegrityError:
        # Announced again (after a reconnect): the unique pending_id says so, with no read before the insert.
        return Clarification.objects.select_related("session").get(pending_id=payload["pending_id"]), False, False
    return record, True, alone


@transaction.atomic
def _insert_record(execution_id: int, session_id: int, payload: dict) -> tuple[Clarification, bool]:
    """On the way to the overlay every statement counts: one read brings the session (locked), its turn, its
    agent's name and whether the task waits on anything else, then the insert; no savepoint."""
    others = Clarification.objects.filter(session__task=OuterRef("task"), status=Status.PENDING)
    session = (
        TaskSession.objects.select_for_update(of=("self",))
        .select_related("agent_profile")
        .with_current_turn()
        .annotate(others_pending=Exists(others))
        .get(pk=session_id)
    )
    kind = url_mode.record_fields(payload) if url_mode.is_url(payload) else {"questions": payload.get("questions", [])}
    record = Clarification.objects.create(
        pending_id=payload["pending_id"],
        session=session,
        turn_id=session.current_turn_id,
        execution_id=execution_id,
        source=Source.ELICITATION,
        # agentctl's wire questions, kept as they came: the one shape a question has (``validation``);
        # for URL mode one question of kind ``url`` (``url_mode``).
        **kind,
        context=payload.get("message") or "",
        tool_call_id=payload.get("tool_call_id") or "",
        form_title=payload.get("form_title") or "",
        form_description=payload.get("form_description") or "",
        # Only the one value the stream defines: anything else is a form the agent waits for.
        delivery="async" if payload.get("delivery") == "async" else "",
    )
    return record, not session.others_pending


#: ``elicitation.declined``'s reason when ``features.acpElicitation`` was off for the execution.
DECLINED_FLAG_OFF = "elicitation_off"


@transaction.atomic
def record_declined(session_id: int, payload: dict) -> None:
    """agentctl declined a question because the flag was off: the timeline says so, once per session.

    Once, not once per question: an agent that keeps asking would otherwise
    fill the timeline with the same sentence. What the notice says depends on
    who reads it (staff get the toggle), so only the fact is stored here
    (``docs/decisions/mapping.md#declined-while-the-flag-is-off``).
    """
    if payload.get("reason") == url_mode.DECLINED_URL:
        url_mode.record_refused(session_id, payload)
        return
    if payload.get("reason") != DECLINED_FLAG_OFF:
        return
    session = TaskSession.objects.select_for_update().get(pk=session_id)
    if session.messages.filter(type=MessageType.STATUS, metadata__notice=DECLINED_FLAG_OFF).exists():
        return
    events.add_message(
        session,
        type=MessageType.STATUS,
        author=AuthorType.SYSTEM,
        content=_("The agent asked a question, and it was declined: structured questions are turned off."),
        metadata={"notice": DECLINED_FLAG_OFF, "flag": ACP_ELICITATION},
    )


def reconcile(execution_id: int, session_id: int, pending: list[dict]) -> None:
    """After a reconnect: adopt what was announced meanwhile, settle what went away."""
    live_ids = {p["pending_id"] for p in pending}
    for payload in pending:
        record_requested(execution_id, session_id, payload)
    actions.do_settle_gone(execution_id, live_ids)


def _wire_answers(answers: list[dict]) -> list[dict]:
    wire = []
    for a in answers:
        entry = {
            "question_id": a["question_id"],
            "selected_options": list(a.get("selected_options", [])),
            "custom_text": a.get("custom_text", ""),
        }
        if a.get("value") is not None:
            entry["value"] = a["value"]
        wire.append(entry)
    return wire


def _live_execution(record: Clarification) -> AgentExecution | None:
    """The execution holding the question, if it may still take an answer (as read with the record)."""
    execution = record.execution
    if execution is None or not execution.is_live or record.agent_disconnected:
        return None
    return execution


async def reach_agent(record: Clarification) -> None:
    """Ahead of an answer to ``record``, open this process's connection to its agentctl (``Runner.reach``)."""
    execution = _live_execution(record) if record.source == Source.ELICITATION else None
    if execution is not None:
        await runner.reach(Endpoint(execution.pk, execution.url, execution.token))


async def _record_attempt(record: Clarification, execution: AgentExecution, given: dict) -> tuple[str, bool]:
    """Make who answered and what they chose known to the stream's owner, before the answer leaves.

    The owner settles from the attempt agentctl names, so it must have it
    when that settlement reaches it. This process, if it is the owner, is
    handed it in memory, and nothing waits for the database on the way to
    the agent; another process finds the row, committed here first. The
    attempt's ``ref``, and whether it was handed over (its row still to write).
    """
    if runner.owns(execution.pk):
        return actions.hand_over(record, **given), True
    return await database_sync_to_async(actions.do_record_attempt)(record, **given), False


async def forward(
    record: Clarification,
    *,
    answers: list[dict],
    rejected: bool,
    reject_reason: str,
    answerer: Answerer | None = None,
) -> Delivery:
    """Send the answer to agentctl and report what happened; never decide locally first.

    Awaited on the server loop; an agentctl that does not answer within
    ``KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS`` is reported as not responding,
    with the question still open.
    """
    # Read with the record by ``answering.question_for``: no second database hop.
    if Clarification._meta.get_field("execution").is_cached(record):
        execution = _live_execution(record)
    else:
        execution = await database_sync_to_async(_live_execution)(record)
    given = {"answers": answers, "rejected": rejected, "answerer": answerer}
    if execution is None:
        await database_sync_to_async(actions.do_settle_undelivered)(record, **given)
        return Delivery(Outcome.AGENT_GONE, _("The agent is gone; your answer was recorded but not delivered."))
    ref, handed_over = await _record_attempt(record, execution, given)
    payload = {
        "pending_id": record.pending_id,
        "answers": [] if rejected else _wire_answers(answers),
        "rejected": rejected,
        "reject_reason": reject_reason,
        "answer_ref": ref,
    }
    endpoint = Endpoint(execution.pk, execution.url, execution.token)
    try:
        async with asyncio.timeout(settings.KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS):
            # Unordered: the operator is told "delivered" as soon as agentctl says so, not once the
            # owner has applied agentctl's settlement, which is the owner's to write
            # (``actions.do_settle_elicitation``), whichever process this is.
            reported = await runner.request(endpoint, "agent.elicitations.respond", payload, ordered=False)
    except NotFound:
        actions.hand_overs.take(ref)  # agentctl took another answer or none: this one settles nothing
        return Delivery(Outcome.ALREADY_SETTLED, _("This question was already answered or withdrawn."))
    except ValidationFailed as invalid:
        actions.hand_overs.take(ref)
        listed = invalid.details.get("problems")
        said = answer_problems.explain(listed if isinstance(listed, list) else [], record.questions)
        problems = tuple(p.sentence for p in said)
        return Delivery(Outcome.INVALID, " ".join(problems), "error", problems, said)
    except AgentStreamNotConnected:
        message = _("Not delivered: the connection to the agent is down. Your question is still open; try again.")
        return Delivery(Outcome.STREAM_DOWN, message, "error")
    except TimeoutError:
        message = _("The agent is not responding; your answer was not delivered. Your question is still open.")
        return Delivery(Outcome.NOT_RESPONDING, message, "error")
    except StreamError as error:
        actions.hand_overs.take(ref)
        logger.warning("agentctl refused an elicitation answer: %s", error.code)
        return Delivery(Outcome.REFUSED, _("Not delivered: the agent refused the answer."), "error")
    # For the owner's reconnect, should agentctl's settlement of it have reached nobody (``actions.do_settle_gone``).
    if handed_over:
        await database_sync_to_async(actions.do_record_attempt)(record, ref=ref, reported=reported, **given)
    else:
        await database_sync_to_async(actions.do_accept_attempt)(record, ref, reported)
    return Delivery(Outcome.DELIVERED)
