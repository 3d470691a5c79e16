"""Applying what agentctl reports to the task's session, turns and messages.

Each function is one transaction and announces its change after commit. They
run on the web process that owns the execution's stream (``runner``), in the
order agentctl sent the notifications.

Streamed text costs what arrived, not what came before it
(:func:`record_text_chunks`): it is appended in SQL, never read back, and
pages get it as a delta (``message.appended``). A streaming text message is
marked ``metadata["streaming"]``; its pages render it whole (its Markdown)
again at most every :data:`STREAM_RENDER_SECONDS` while it streams, less
often once it is long (:data:`STREAM_RENDER_CHARS_PER_SECOND`;
``metadata["rendered_at"]``, the wall-clock time of the last such render,
kept in the row so any process recording the session next honours it), and
once more when it settles: when anything else is recorded in its session.
"""

import logging
import time
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import F, Subquery, TextField, Value
from django.db.models.functions import Concat, Length
from django.utils import timezone
from django.utils.translation import gettext as _

from kandev_web import git, live
from kandev_web.agentctl.stderr_tail import cap_tail
from kandev_web.repositories import worktrees
from kandev_web.repositories.models import Worktree
from kandev_web.storable import storable

from . import exits, offers, signals, tool_calls, usage, workflow
from .models import AgentExecution, AuthorType, Message, MessageType, TaskSession, Turn

logger = logging.getLogger(__name__)

#: ACP ``session/update`` kinds that stream text, and the message type each becomes.
_TEXT_CHUNKS = {
    "agent_message_chunk": MessageType.MESSAGE,
    "agent_thought_chunk": MessageType.THINKING,
}
#: ``turn.completed``'s ``error.code`` when the turn ended because the agent process did.
AGENT_EXITED = "agent_exited"
_TOOL_TYPES = {"edit": MessageType.TOOL_EDIT, "read": MessageType.TOOL_READ, "execute": MessageType.TOOL_EXECUTE}
#: While a message streams, its pages render it whole at most this often (seconds); in between they only append.
STREAM_RENDER_SECONDS = 2.0
#: ... and a long one less often: a whole render costs what the message is long, so rendering at most this
#: many characters a second keeps what a chunk costs its pages flat however long the message grows (10 s at 100 KB).
STREAM_RENDER_CHARS_PER_SECOND = 10_000


def message_changed(message: Message, *, created: bool) -> None:
    live.message_changed(message.session.task_id, message.pk, created=created)


def _locked_session(session_id: int) -> TaskSession:
    return TaskSession.objects.select_for_update().select_related("task").get(pk=session_id)


def _latest_turn(session: TaskSession):
    return session.turns.order_by("-started_at", "-pk")


def current_turn(session: TaskSession) -> Turn | None:
    return _latest_turn(session).first()


def add_message(
    session: TaskSession, *, type, content="", author=AuthorType.AGENT, metadata=None, requests_input=False
):
    settle_streamed(session)
    message = Message.objects.create(
        session=session,
        turn=current_turn(session),
        type=type,
        author_type=author,
        content=content,
        metadata=metadata or {},
        requests_input=requests_input,
    )
    message_changed(message, created=True)
    return message


def _text_of(content) -> str:
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text", ""))
    return ""


class TextChunk(NamedTuple):
    kind: str
    text: str


def text_chunk(update: object) -> TextChunk | None:
    """The streamed text in an ACP ``session/update``, if that is what it is: its kind and its text."""
    if not isinstance(update, dict) or update.get("sessionUpdate") not in _TEXT_CHUNKS:
        return None
    return TextChunk(update["sessionUpdate"], _text_of(update.get("content")))


def record_session_update(session_id: int, update: dict) -> None:
    kind = update.get("sessionUpdate")
    if kind in _TEXT_CHUNKS:
        record_text_chunks(session_id, kind, _text_of(update.get("content")))
        return
    if kind in _OFFER_UPDATES:
        record_offers_update(session_id, update)
        return
    with transaction.atomic():
        session = _locked_session(session_id)
        if kind in ("tool_call", "tool_call_update"):
            _upsert_tool_call(session, update)
        elif kind == "plan":
            _upsert_plan(session, update.get("entries") or [])
        elif kind == "usage_update":
            usage.record_usage(session, update)


#: The ``session/update`` kinds that change what the composer offers (``offers``).
_OFFER_UPDATES = frozenset({"current_mode_update", "available_commands_update", "config_option_update"})


@transaction.atomic
def record_offers_update(session_id: int, update: dict) -> None:
    """The agent changed its current mode, its commands or its options: the task's composers show it at once.

    Nothing is written, and no page re-renders, when nothing it shows changed
    (a mode it never offered, the same list again).
    """
    locked = TaskSession.objects.select_for_update().only("pk", "task_id", "modes", "commands", "config_options")
    session = locked.get(pk=session_id)
    kind = update.get("sessionUpdate")
    value: object
    if kind == "current_mode_update":
        field, value = "modes", offers.with_current_mode(session.modes, update.get("currentModeId"))
    elif kind == "available_commands_update":
        field, value = "commands", offers.commands(update.get("availableCommands"))
    else:
        field, value = "config_options", offers.options(update.get("configOptions"))
    _keep_offer(session, field, value)


def _keep_offer(session: TaskSession, field: str, value: object) -> None:
    if getattr(session, field) == value:
        return
    TaskSession.objects.filter(pk=session.pk).update(**{field: value})
    live.task_changed(session.task_id, ["composer"])


def record_mode_set(session_id: int, mode_id: str) -> None:
    """The agent accepted ``session/set_mode``: the mode is current, whether or not it also says so in an update."""
    record_offers_update(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id})


def record_options_set(session_id: int, config_options: object) -> None:
    """The agent answered ``session/set_config_option`` with all its options as they now are."""
    record_offers_update(session_id, {"sessionUpdate": "config_option_update", "configOptions": config_options})


def keep_offers(session: TaskSession, answer: dict) -> None:
    """Keep the modes and options an ``agent.session.new``/``resume`` answer carries.

    Its commands come as an update of their own.
    """
    session.modes = offers.modes(answer.get("modes"))
    session.config_options = offers.options(answer.get("config_options"))
    session.save(update_fields=["modes", "config_options"])


class Streamed(NamedTuple):
    """Where a stream's text went last: what the next batch needs to be appended without reading anything."""

    kind: str
    message_id: int
    task_id: int
    #: The message's length after that append (characters).
    length: int
    #: When its pages last rendered it whole (``metadata["rendered_at"]``).
    rendered_at: float

    def render_due(self, now: float) -> bool:
        every = max(STREAM_RENDER_SECONDS, self.length / STREAM_RENDER_CHARS_PER_SECOND)
        return now - self.rendered_at >= every


def record_text_chunks(session_id: int, kind: str, text: str, *, after: Streamed | None = None) -> Streamed | None:
    """Stream ``text`` into one message until something else is said in between; where it went.

    ``kind`` is the ACP ``sessionUpdate`` kind (``agent_message_chunk`` or
    ``agent_thought_chunk``) and ``text`` one or more consecutive chunks of it,
    joined. When the current turn's last message is the agent's of that type,
    ``text`` is appended to it in SQL (``content || text``): its content is
    never read, so what a chunk costs here does not grow with the message.
    Pages are sent ``text`` itself (``live.message_appended``) with the length
    the message had before it, so a page that was just sent the whole message
    knows what it already shows.

    ``after``, what the same stream's previous call returned, lets the next
    batch be one statement (:func:`_append_where_left_off`), two when its
    pages are due to render it whole; the message is found again when that
    one no longer applies.
    """
    if not text:
        return after
    if after is None or after.kind != kind or not _append_where_left_off(session_id, after, text):
        return _find_and_append(session_id, kind, text)
    streamed = after._replace(length=after.length + len(text))
    now = time.time()
    if after.render_due(now):
        Message.objects.filter(pk=after.message_id).update(metadata={"streaming": True, "rendered_at": now})
        streamed = streamed._replace(rendered_at=now)
        live.message_changed(after.task_id, after.message_id, created=False)  # before its delta, as below
    live.message_appended(after.task_id, after.message_id, text, offset=after.length)
    return streamed


#: :func:`_append_where_left_off`'s statement (``Message``'s table and columns).
_APPEND_WHERE_LEFT_OFF = (
    "UPDATE agent_sessions_message SET content = content || %s WHERE id = %s AND LENGTH(content) = %s"
    " AND NOT EXISTS (SELECT 1 FROM agent_sessions_message later WHERE later.session_id = %s AND later.id > %s)"
)


def _append_where_left_off(session_id: int, after: Streamed, text: str) -> bool:
    """Append ``text`` where the stream's previous batch went, if nothing changed there since.

    That is: the message is still its session's last and as long as that
    batch left it (nobody wrote in between: another process, after a
    takeover). A message settled since is not looked for: whatever settles
    one reaches the owner as a notification of the same stream, and the
    owner forgets ``after`` then (``runner``).

    Written out, not built with the ORM: it runs for every batch of every
    stream, and building it took the ORM fifty times longer than SQLite
    takes to run it.
    """
    with connection.cursor() as cursor:
        cursor.execute(_APPEND_WHERE_LEFT_OFF, [text, after.message_id, after.length, session_id, after.message_id])
        return cursor.rowcount == 1


@transaction.atomic
def _find_and_append(session_id: int, kind: str, text: str) -> Streamed:
    type_ = _TEXT_CHUNKS[kind]
    # Three statements, each as small as it can be.
    session = TaskSession.objects.select_for_update().only("task_id").get(pk=session_id)
    last = (
        Message.objects.filter(session=session, turn=Subquery(_latest_turn(session).values("pk")[:1]))
        .order_by("-created_at", "-pk")
        .values("pk", "type", "author_type", "metadata", length=Length("content"))
        .first()
    )
    now = time.time()
    if last is None or last["type"] != type_ or last["author_type"] != AuthorType.AGENT:
        message = add_message(session, type=type_, content=text, metadata={"streaming": True, "rendered_at": now})
        return Streamed(kind, message.pk, session.task_id, len(text), now)
    changes: dict[str, object] = {"content": Concat(F("content"), Value(text), output_field=TextField())}
    # Whole again every few seconds; and at once when it had settled and streams again (text after the
    # turn's end, say), so that its pages get its stream element back.
    streamed = Streamed(kind, last["pk"], session.task_id, last["length"], last["metadata"].get("rendered_at", 0.0))
    render = not last["metadata"].get("streaming") or streamed.render_due(now)
    if render:
        changes["metadata"] = {"streaming": True, "rendered_at": now}
        streamed = streamed._replace(rendered_at=now)
    Message.objects.filter(pk=last["pk"]).update(**changes)
    if render:
        # Before the delta: a page rendering the message whole then has the delta's text, and skips it.
        live.message_changed(session.task_id, last["pk"], created=False)
    live.message_appended(session.task_id, last["pk"], text, offset=last["length"])
    return streamed._replace(length=last["length"] + len(text))


def settle_streamed(session: TaskSession) -> None:
    """Something else is recorded in the session: the text streaming in its current turn is whole.

    Its pages render it once more, whole (its Markdown), and never again for
    its sake. Called before anything else is recorded, so that render comes
    before what follows it on every page.
    """
    turn = Subquery(_latest_turn(session).values("pk")[:1])
    streamed = Message.objects.filter(turn=turn, type__in=_TEXT_CHUNKS.values(), metadata__streaming=True)
    for pk in list(streamed.values_list("pk", flat=True)):
        # A text message has no other metadata: what it had, it had for streaming.
        Message.objects.filter(pk=pk).update(metadata={})
        live.message_changed(session.task_id, pk, created=False)


def _tool_call_message(session: TaskSession, tool_call_id: str) -> Message | None:
    return Message.objects.filter(
        session=session, type__in=[MessageType.TOOL_CALL, *_TOOL_TYPES.values()], metadata__toolCallId=tool_call_id
    ).first()


def _upsert_tool_call(session: TaskSession, update: dict) -> None:
    tool_call_id = str(update.get("toolCallId", ""))
    existing = _tool_call_message(session, tool_call_id)
    if existing is None:
        metadata = tool_calls.merge_update({"toolCallId": tool_call_id}, update)
        add_message(
            session,
            type=_TOOL_TYPES.get(metadata.get("kind", ""), MessageType.TOOL_CALL),
            content=str(metadata.get("title", "")),
            metadata=metadata,
        )
        return
    settle_streamed(session)
    existing.metadata = tool_calls.merge_update(existing.metadata, update)
    existing.content = str(existing.metadata.get("title", existing.content))
    existing.save(update_fields=["metadata", "content"])
    message_changed(existing, created=False)


def _upsert_plan(session: TaskSession, entries: list) -> None:
    turn = current_turn(session)
    plan = Message.objects.filter(session=session, turn=turn, type=MessageType.AGENT_PLAN).first()
    entries = [
        {
            "content": str(e.get("content", "")),
            "status": str(e.get("status", "")),
            "priority": str(e.get("priority", "")),
        }
        for e in entries
        if isinstance(e, dict)
    ]
    if plan is None:
        add_message(session, type=MessageType.AGENT_PLAN, metadata={"entries": entries})
    else:
        settle_streamed(session)
        plan.metadata = {"entries": entries}
        plan.save(update_fields=["metadata"])
        message_changed(plan, created=False)


@transaction.atomic
def record_permission_requested(session_id: int, payload: dict) -> None:
    """Show the agent's permission request; once, though a reconnect may report it again."""
    session = _locked_session(session_id)
    if _permission_requests(session).filter(metadata__pending_id=payload.get("pending_id")).exists():
        return
    tool_call = payload.get("tool_call") or {}
    add_message(
        session,
        type=MessageType.PERMISSION_REQUEST,
        content=str(tool_call.get("title", "")),
        metadata={
            "pending_id": payload.get("pending_id"),
            "status": "pending",
            "tool_call": tool_call,
            "options": payload.get("options") or [],
        },
        requests_input=True,
    )
    workflow.permission_requested(session)


def _permission_requests(session: TaskSession):
    return Message.objects.filter(session=session, type=MessageType.PERMISSION_REQUEST)


@transaction.atomic
def reconcile_permissions(session_id: int, pending: list[dict]) -> None:
    """agentctl's open permission requests, read after it said part of its stream is no longer kept.

    One asked in the part lost is shown now; one shown as waiting that
    agentctl no longer holds was settled in it, and is shown as cancelled.
    """
    open_ids = {payload.get("pending_id") for payload in pending}
    waiting = _permission_requests(_locked_session(session_id)).filter(metadata__status="pending")
    for pending_id in list(waiting.values_list("metadata__pending_id", flat=True)):
        if pending_id not in open_ids:
            record_permission_settled(session_id, {"pending_id": pending_id, "outcome": "cancelled"})
    for payload in pending:
        record_permission_requested(session_id, payload)


@transaction.atomic
def record_permission_settled(session_id: int, payload: dict) -> None:
    session = _locked_session(session_id)
    requests = _permission_requests(session).filter(metadata__pending_id=payload.get("pending_id"))
    message = requests.select_for_update().first()
    if message is None:
        return
    settle_streamed(session)
    option_id = payload.get("option_id")
    message.metadata = {
        **message.metadata,
        "status": "approved" if payload.get("outcome") == "selected" else "cancelled",
        "outcome": payload.get("outcome"),
        "option_id": option_id,
    }
    message.save(update_fields=["metadata"])
    message_changed(message, created=False)
    _tool_call_permitted(session, message.metadata)
    turn = current_turn(session)
    assert turn is not None  # the permission was asked in one
    still_asking = _permission_requests(session).filter(metadata__status="pending").exists()
    workflow.permission_settled(session, runs_again=turn.completed_at is None and not still_asking)


def _tool_call_permitted(session: TaskSession, permission: dict) -> None:
    """The tool call the permission was asked for no longer waits: it runs, or it does not."""
    tool_call_id = (permission.get("tool_call") or {}).get("toolCallId")
    tool_call = _tool_call_message(session, str(tool_call_id)) if tool_call_id is not None else None
    if tool_call is None:
        return
    options = [option for option in permission.get("options") or [] if isinstance(option, dict)]
    kind = next((o.get("kind") for o in options if o.get("optionId") == permission.get("option_id")), None)
    metadata = tool_calls.after_permission(
        tool_call.metadata, outcome=str(permission.get("outcome") or ""), option_kind=str(kind or "")
    )
    if metadata != tool_call.metadata:
        tool_call.metadata = metadata
        tool_call.save(update_fields=["metadata"])
        message_changed(tool_call, created=False)


@transaction.atomic
def record_turn_completed(session_id: int, payload: dict) -> None:
    session = _locked_session(session_id)
    settle_streamed(session)
    turn = session.turns.filter(agent_turn_id=payload.get("turn_id", "")).first() or current_turn(session)
    if turn is not None and turn.completed_at is None:
        turn.completed_at = timezone.now()
        turn.stop_reason = str(payload.get("stop_reason", ""))[:64]
        turn.save(update_fields=["completed_at", "stop_reason"])
    stop_reason = payload.get("stop_reason")
    error = payload["error"] if isinstance(payload.get("error"), dict) else {}
    # A turn that ended because the agent did is told once, with the agent's end (record_agent_exited).
    if stop_reason == "error" and error.get("code") != AGENT_EXITED:
        add_message(
            session,
            type=MessageType.ERROR,
            author=AuthorType.SYSTEM,
            content=_("The turn ended with an error: %(message)s") % {"message": error.get("message", _("unknown"))},
        )
    elif stop_reason == "cancelled":
        add_message(session, type=MessageType.STATUS, author=AuthorType.SYSTEM, content=_("Turn cancelled."))
    _record_worktree_changes(session)
    workflow.turn_finished(session)
    signals.turn_ended.send(TaskSession, session=session, turn=turn, stop_reason=stop_reason)


def _record_worktree_changes(session: TaskSession) -> None:
    """After a turn, what the task's worktree now differs in from its base, each file as a diff."""
    worktree = Worktree.objects.select_related("repository").filter(task_id=session.task_id).first()
    if not worktrees.made(worktree):
        return
    try:
        diffs, omitted = worktrees.changed_files(worktree)
    except (git.GitError, OSError) as error:
        # Said on the timeline (paths and git's words, no agent text), never logged.
        add_message(
            session,
            type=MessageType.ERROR,
            author=AuthorType.SYSTEM,
            content=_("The worktree's changes could not be read: %(error)s") % {"error": error},
        )
        return
    if not diffs:
        return
    add_message(
        session,
        type=MessageType.WORKTREE_CHANGES,
        author=AuthorType.SYSTEM,
        content=worktree.branch,
        metadata=storable({"branch": worktree.branch, "base": worktree.base, "diffs": diffs, "omitted_files": omitted}),
    )


@transaction.atomic
def record_prompt_not_delivered(turn_id: int, reason: str) -> None:
    """The operator's prompt never reached the agent: the turn it opened is closed, and said so.

    No turn of the agent's ended, so nothing is announced as one (no
    "finished its turn" notification, open questions are not left behind).
    """
    turn = Turn.objects.select_for_update().get(pk=turn_id)
    session = _locked_session(turn.session_id)
    if turn.completed_at is None:
        turn.completed_at, turn.stop_reason = timezone.now(), "not_delivered"
        turn.save(update_fields=["completed_at", "stop_reason"])
    add_message(
        session,
        type=MessageType.ERROR,
        author=AuthorType.SYSTEM,
        content=_("Your message was not delivered: %(reason)s") % {"reason": reason},
    )
    workflow.turn_finished(session)


@transaction.atomic
def record_agent_exited(execution_id: int, payload: dict, *, agentctl_gone: bool = False, unheld_for: str = "") -> None:
    """The agent (or agentctl with it) ended: an operator's stop, or a failure to tell them about.

    Reported twice when all goes well, by agentctl's ``agent.exited`` and by
    the runner seeing agentctl exit; the first one counts. ``unheld_for``
    (agentctl's own timeout, as operators write it) when agentctl stopped
    its agent and itself because no web process held it for that long: a
    stop as designed, no failure.
    """
    execution = AgentExecution.objects.select_for_update().filter(pk=execution_id).first()
    if execution is None or execution.ended_at is not None:
        # None: its task was deleted, and nobody is left to tell.
        return
    execution.ended_at = timezone.now()
    execution.exit_code = payload.get("exit_code")
    execution.save(update_fields=["ended_at", "exit_code"])
    session = _locked_session(execution.session_id)
    settle_streamed(session)
    turn = current_turn(session)
    if turn is not None and turn.completed_at is None:
        turn.completed_at = timezone.now()
        turn.stop_reason = "error"
        turn.save(update_fields=["completed_at", "stop_reason"])
    if execution.stop_requested:
        workflow.agent_stopped(session)
        add_message(session, type=MessageType.STATUS, author=AuthorType.SYSTEM, content=_("Agent stopped."))
    elif unheld_for:
        workflow.agent_stopped(session)
        said = _("The agent was stopped: no web server held it for %(timeout)s.") % {"timeout": unheld_for}
        add_message(session, type=MessageType.STATUS, author=AuthorType.SYSTEM, content=said)
    elif workflow.has_ended(session):
        workflow.agent_exited(session)
    else:
        end = exits.ending(payload.get("exit_code"), payload.get("signal"))
        error = exits.agentctl_failure(end) if agentctl_gone else exits.agent_failure(end)
        stderr_tail = payload.get("stderr_tail")
        output = cap_tail(stderr_tail) if isinstance(stderr_tail, str) and not agentctl_gone else ""
        workflow.agent_failed(session, error, output=output)
        _say_the_session_failed(session)
    signals.agent_gone.send(TaskSession, session=session, execution_id=execution.pk, agentctl_gone=agentctl_gone)


def _say_the_session_failed(session: TaskSession) -> None:
    """Mark the failure in the timeline; why it failed (and what the agent printed) is on the session, once."""
    add_message(
        session,
        type=MessageType.ERROR,
        author=AuthorType.SYSTEM,
        content=_("The agent failed. Its session, above, says why."),
    )


@transaction.atomic
def record_acp_session(session_id: int, acp_session_id: str, answer: dict | None = None) -> None:
    """The agent opened its ACP session; ``answer`` is agentctl's ``agent.session.new`` answer (modes, options)."""
    session = _locked_session(session_id)
    if answer is not None:
        keep_offers(session, answer)
    workflow.session_opened(session, acp_session_id)


@transaction.atomic
def record_stream_gap(session_id: int, gap: dict) -> None:
    """agentctl no longer had part of what it said while nobody applied it: say so, once, where it is missing.

    What questions and permissions are still open is read again from agentctl
    on every connection (``signals.stream_reconnected``); the text is lost.
    """
    add_message(
        _locked_session(session_id),
        type=MessageType.STATUS,
        author=AuthorType.SYSTEM,
        content=_(
            "Part of what the agent said while no web server held its stream is no longer kept by its "
            "agentctl, and is missing here."
        ),
        metadata={"after_seq": gap.get("after_seq"), "first_kept_seq": gap.get("first_kept_seq")},
    )


@transaction.atomic
def record_stream_state(execution_id: int, connected: bool) -> None:
    """The owning process lost or regained its stream to agentctl; operators see it."""
    execution = AgentExecution.objects.select_related("session__task__board").get(pk=execution_id)
    if execution.stream_connected != connected and execution.ended_at is None:
        execution.stream_connected = connected
        execution.save(update_fields=["stream_connected"])
        workflow.connection_changed(execution.session)


def record_prompt_sent(turn_id: int, agent_turn_id: str) -> None:
    Turn.objects.filter(pk=turn_id).update(agent_turn_id=agent_turn_id)


@transaction.atomic
def record_start_failed(session_id: int, reason: str) -> None:
    session = _locked_session(session_id)
    workflow.start_failed(session, reason)
    _say_the_session_failed(session)
