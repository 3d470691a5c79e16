"""What the task page shows, for its view and its consumer alike.

The page's first render, the live fragments the task consumer pushes and the
catch-up it sends on every connect read the same context, so both import it
from here and neither imports the other.
"""

from django.db.models import Min, Q
from django.http import QueryDict
from django.template.loader import render_to_string
from django.utils.html import format_html

from kandev_web import live, socket_input
from kandev_web.board.models import Task
from kandev_web.clarifications import overlay, timeline
from kandev_web.pages.board.queries import board_columns, cards_for, changed_cards, parse_shown_through
from kandev_web.repositories.models import Worktree
from kandev_web.sessions import ownership, services
from kandev_web.sessions.display import display_state, turn_open_reason
from kandev_web.sessions.events import current_turn
from kandev_web.sessions.models import Message, MessageType, TaskSession
from kandev_web.sessions.pending import pending_actions
from kandev_web.sessions.resuming import resumable

from .forms import StartSessionForm
from .streaming import Shown


def task_context(task: Task, *, with_messages: bool = True, card=None, parts=live.TASK_PARTS) -> dict:
    """What the task page shows; a live fragment reads only what its ``parts`` show, and no timeline.

    ``card`` is the task's card when the caller has read it already (the task list has).
    """
    sessions = list(task.sessions.select_related("agent_profile"))
    current = sessions[0] if sessions else None
    execution = services.live_execution(current) if current else None
    context = {
        "task": task,
        "parts": parts,
        "sessions": sessions,
        "current_session": current,
        "agent_live": execution is not None,
        "stream_connected": execution is not None and ownership.stream_held(execution),
        # Where the running agent is, when that is not the web machine.
        "executor_name": execution.executor.name if execution is not None and execution.executor is not None else "",
        "messages": (
            list(
                Message.objects.filter(session__task=task)
                .select_related("session__agent_profile")  # each session's divider names its agent
                .order_by("created_at", "pk")
            )
            if with_messages
            else []
        ),
    }
    # The questions' rows read their records, all in one query.
    context["question_records"] = timeline.records_of(context["messages"])
    if "details" in parts:
        context["worktree"] = Worktree.objects.select_related("repository").filter(task=task).first()
        context["card"] = card or cards_for(Task.objects.filter(pk=task.pk))[0]
    if "session" in parts or "composer" in parts:
        context["turn_open"] = turn_open = bool(current and current.turns.filter(completed_at__isnull=True).exists())
        waiting_for = pending_actions(task.sessions.all())
        for session in sessions:
            session.display_state = display_state(
                session.state,
                pending_action=waiting_for.get(session.pk),
                turn_open=turn_open and session is current,
            )
        if current is not None and turn_open:
            context["turn_open_reason"] = turn_open_reason(waiting_for.get(current.pk))
        context["resumable"] = current is not None and execution is None and resumable(current)
    if "composer" in parts:
        context["start_form"] = StartSessionForm(task=task)
        context["clarifications"] = overlay.pending_for_task(task.pk)
    return context


def task_list_context(task: Task, *, through=None) -> dict:
    """The task list beside the task page: the board's steps, each with its first page of rows, as the board shows them.

    The page's own task is always among them (its step's ``pinned`` row when
    it sorts past that step's first page), read in the same queries.
    ``through`` is how far "Show more" had taken each step (``board_columns``).
    """
    groups = board_columns(task.board, pinned_task_id=task.pk, through=through)
    current = next(
        (card for group in groups for card in (*group.cards, group.pinned) if card and card.task.pk == task.pk),
        None,
    )
    return {"current_task_id": task.pk, "current_card": current, "groups": groups}


def render_task_rows(board_id: int, current_task_id: int, *, step_ids, task_ids) -> str:
    """The live patch of a task page's task list after ``task_ids`` changed: their rows and the counts of their steps.

    static/js/live.js puts each row in its place by its sort key, as it does the board's cards.
    """
    groups, gone = changed_cards(board_id, step_ids=step_ids, task_ids=task_ids)
    context = {"current_task_id": current_task_id, "groups": groups, "gone": gone}
    return render_to_string("sessions/task.html#task-rows-oob", context)


def render_catch_up(task: Task, page_state: QueryDict, *, tab: str = "", user=None, shown: Shown | None = None) -> str:
    """Everything the task page keeps live, as it is now, out of band: all it may have missed while its socket was down.

    ``page_state`` is what the page said on connecting (its socket URL's query
    string): ``through``, how far "Show more" had taken each step of its task
    list, and ``after``, the last timeline message it has. ``tab`` is the
    socket's own id (``settlement.tab_id``), for "answered in this tab";
    ``user`` the viewer, for what a notice tells them to do; ``shown`` learns
    how much of each streaming message the page now has.
    """
    task_list = task_list_context(task, through=parse_shown_through(page_state.getlist("through")))
    context = task_context(task, with_messages=False, card=task_list["current_card"]) | task_list
    context["timeline"] = _missed_messages(task, context["current_session"], _message_id(page_state.get("after")))
    context["question_records"] = timeline.records_of(message for message, _, _ in context["timeline"])
    if shown is not None:
        shown.rendered(message for message, _, _ in context["timeline"])
    context["tab"] = tab
    context["user"] = user
    return render_to_string("sessions/task.html#catch-up-oob", context)


def render_message(
    task_id: int, message_id: int, *, created: bool, tab: str = "", user=None, shown: Shown | None = None
) -> str:
    """A live timeline row of the task: added at the end (``created``, after its session's divider when it is
    the session's first) or replaced in place; nothing when it is not the task's. ``tab`` is the viewer's
    socket (``clarifications.settlement.tab_id``), for "answered in this tab"; ``user`` the viewer;
    ``shown`` learns how much of the message the page now has, when it is streaming."""
    messages = Message.objects.select_related("session__agent_profile")
    message = messages.filter(pk=message_id, session__task_id=task_id).first()
    if message is None:
        return ""
    if shown is not None:
        shown.rendered([message])
    opens_session = created and not Message.objects.filter(session_id=message.session_id, pk__lt=message.pk).exists()
    context = {"message": message, "created": created, "opens_session": opens_session, "tab": tab, "user": user}
    return render_to_string("sessions/task.html#message-oob", context)


def render_delta(message_id: int, text: str) -> str:
    """Text streamed into a message, appended to its stream element (``task.html#message``) as it is, escaped."""
    return format_html('<div hx-swap-oob="beforeend:#message-{}-stream">{}</div>', message_id, text)


def _message_id(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return socket_input.column_int(value)
    except ValueError:
        return None


def _missed_messages(task: Task, session: TaskSession | None, after: int | None) -> list[tuple[Message, bool, bool]]:
    """The timeline messages a page may have missed, each with whether it is new to the page (it has up to
    ``after``) and whether it is then the first of its session, which the page has no divider for yet.

    Messages are changed in place without a trace of when, so every one that
    may have been is re-sent: the current session's permission cards and
    questions (answered, cancelled or left behind meanwhile) and its latest
    turn (text streams into a message, tool calls finish, the plan moves on).
    A page that does not say what it has (``after`` is None) gets no new ones.
    """
    missed = Q(pk__gt=after) if after is not None else Q(pk__in=[])
    if session is not None:
        in_place = Q(type__in=[MessageType.PERMISSION_REQUEST, MessageType.CLARIFICATION_REQUEST])
        if turn := current_turn(session):
            in_place |= Q(turn=turn)
        missed |= Q(session=session) & in_place
    messages = (
        Message.objects.filter(session__task=task)
        .filter(missed)
        .select_related("session__agent_profile")
        .order_by("created_at", "pk")
    )
    firsts = set(
        Message.objects.filter(session__task=task)
        .order_by()
        .values("session")
        .annotate(first=Min("pk"))
        .values_list("first", flat=True)
    )
    missed_rows = []
    for message in messages:
        created = after is not None and message.pk > after
        missed_rows.append((message, created, created and message.pk in firsts))
    return missed_rows
