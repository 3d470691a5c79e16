"""The task page and the operator's session actions.

Actions answer HTMX with nothing to swap (the change reaches every open view of
the task through its socket) or with a toast saying why nothing happened.
"""

from django import forms
from django.conf import settings
from django.db.models import Q
from django.http import HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from kandev_web.board.models import Task
from kandev_web.board.queries import (
    board_columns,
    cards_for,
    changed_cards,
    column_page,
    parse_shown_through,
    parse_sort_key,
)
from kandev_web.clarifications import records

from . import services
from .events import current_turn
from .mcp_tokens import MCP_PATH
from .models import AgentProfile, Message, MessageType, TaskSession


class StartSessionForm(forms.Form):
    profile = forms.ModelChoiceField(queryset=AgentProfile.objects.none(), label=_("Agent"), empty_label=None)
    prompt = forms.CharField(label=_("Prompt"), widget=forms.Textarea(attrs={"rows": 3}), max_length=100_000)

    def __init__(self, *args, task: Task, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["profile"].queryset = AgentProfile.objects.filter(workspace=task.board.workspace_id)
        self.fields["profile"].widget.attrs["data-testid"] = "session-start-profile"
        self.fields["prompt"].widget.attrs.update(
            {"data-testid": "session-start-prompt", "placeholder": _("What should the agent do?")}
        )
        self.fields["prompt"].initial = task.description or task.title


class PromptForm(forms.Form):
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=100_000)


def _task(request, task_id) -> Task:
    return get_object_or_404(Task.objects.for_user(request.user).select_related("board", "step"), pk=task_id)


def _session(request, session_id) -> TaskSession:
    return get_object_or_404(TaskSession.objects.for_user(request.user).select_related("task__board"), pk=session_id)


def toast(message, *, level="error", status=200) -> HttpResponse:
    html = render_to_string("base.html#toast", {"message": message, "level": level})
    response = HttpResponse(html, status=status)
    response["HX-Reswap"] = "none"
    return response


def task_detail(request, task_id):
    task = _task(request, task_id)
    task_list = task_list_context(task)
    return render(request, "sessions/task.html", task_context(task, card=task_list["current_card"]) | task_list)


def task_context(task: Task, *, with_messages: bool = True, card=None) -> dict:
    """What the task page shows; the live fragments need no timeline (``with_messages=False``).

    ``card`` is the task's card when the caller has read it already (the task list has).
    """
    sessions = list(task.sessions.select_related("agent_profile"))
    current = sessions[0] if sessions else None
    execution = services.live_execution(current) if current else None
    return {
        "task": task,
        "card": card or cards_for(Task.objects.filter(pk=task.pk))[0],
        "sessions": sessions,
        "current_session": current,
        "agent_live": execution is not None,
        "stream_connected": execution is not None and execution.stream_connected,
        # Where the running agent is, when that is not the web machine.
        "executor_name": execution.executor.name if execution is not None and execution.executor_id else "",
        "turn_open": bool(current and current.turns.filter(completed_at__isnull=True).exists()),
        "start_form": StartSessionForm(task=task),
        "clarifications": records.pending_for_task(task.pk),
        "messages": (
            list(Message.objects.filter(session__task=task).order_by("created_at", "pk")) if with_messages else []
        ),
    }


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

    app.js puts each row in its place by its sort key, as it does the board's cards.
    """
    groups, gone = changed_cards(board_id, step_ids=step_ids, task_ids=task_ids)
    context = {"current_task_id": current_task_id, "groups": groups, "gone": gone}
    return render_to_string("sessions/task.html#task-rows-oob", context)


def render_catch_up(task: Task, page_state: QueryDict) -> str:
    """Everything the task page keeps live, as it is now, out of band: all it may have missed while its socket was down.

    ``page_state`` is what the page said on connecting (its socket URL's query
    string): ``through``, how far "Show more" had taken each step of its task
    list, and ``after``, the last timeline message it has.
    """
    task_list = task_list_context(task, through=parse_shown_through(page_state.getlist("through")))
    context = task_context(task, with_messages=False, card=task_list["current_card"]) | task_list
    context["timeline"] = _missed_messages(task, context["current_session"], _message_id(page_state.get("after")))
    return render_to_string("sessions/task.html#catch-up-oob", context)


def _message_id(value: str | None) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _missed_messages(task: Task, session: TaskSession | None, after: int | None) -> list[tuple[Message, bool]]:
    """The timeline messages a page may have missed, each with whether it is new to the page (it has up to ``after``).

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
    messages = Message.objects.filter(session__task=task).filter(missed).order_by("created_at", "pk")
    return [(message, after is not None and message.pk > after) for message in messages]


def task_list_more(request, task_id, step_id):
    """A step's "Show more" in the task list: its next rows after the sort key ``?after=position,id``."""
    task = _task(request, task_id)
    step = get_object_or_404(task.board.steps, pk=step_id)
    try:
        after = parse_sort_key(request.GET.get("after", ""))
    except ValueError:
        return HttpResponseBadRequest()
    group = column_page(task.board, step.pk, after)
    return render(request, "sessions/task.html#task-list-page", {"current_task_id": task.pk, "group": group})


@require_POST
def session_start(request, task_id):
    task = _task(request, task_id)
    form = StartSessionForm(request.POST, task=task)
    if not form.is_valid():
        return toast(_("Choose an agent and write a prompt."))
    mcp_url = settings.KANDEV_MCP_URL or request.build_absolute_uri(MCP_PATH)
    services.start_session(task, form.cleaned_data["profile"], form.cleaned_data["prompt"], mcp_url=mcp_url)
    return HttpResponse(status=204)


def _act(action, *args) -> HttpResponse:
    try:
        action(*args)
    except services.AlreadySettled as error:
        return toast(str(error), level="info")
    except services.SessionActionError as error:
        return toast(str(error))
    return HttpResponse(status=204)


@require_POST
def session_prompt(request, session_id):
    session = _session(request, session_id)
    form = PromptForm(request.POST)
    if not form.is_valid():
        return toast(_("Write a prompt first."))
    return _act(services.send_prompt, session, form.cleaned_data["prompt"])


@require_POST
def session_cancel(request, session_id):
    return _act(services.cancel_turn, _session(request, session_id))


@require_POST
def session_stop(request, session_id):
    return _act(services.stop_session, _session(request, session_id))


@require_POST
def permission_respond(request, session_id, pending_id):
    session = _session(request, session_id)
    option_id = request.POST.get("option_id") or None
    return _act(services.respond_permission, session, pending_id, option_id)
