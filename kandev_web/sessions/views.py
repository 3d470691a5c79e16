"""The task page and the operator's session actions.

Actions answer HTMX with nothing to swap (the change reaches every open view of
the task through its socket) or with a toast saying why nothing happened.
"""

from django import forms
from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from kandev_web.board.models import Task
from kandev_web.clarifications import services as clarifications
from kandev_web.board.queries import board_rows, cards_for

from . import services
from .mcp_tokens import MCP_PATH
from .models import AgentProfile, Message, TaskSession


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
    sessions = TaskSession.objects.filter(task__board__workspace__members=request.user).select_related("task__board")
    return get_object_or_404(sessions, pk=session_id)


def toast(message, *, level="error", status=200) -> HttpResponse:
    html = render_to_string("base.html#toast", {"message": message, "level": level})
    response = HttpResponse(html, status=status)
    response["HX-Reswap"] = "none"
    return response


def task_detail(request, task_id):
    task = _task(request, task_id)
    return render(request, "sessions/task.html", task_context(task) | task_list_context(task))


def task_context(task: Task, *, with_messages: bool = True) -> dict:
    """What the task page shows; the live fragments need no timeline (``with_messages=False``)."""
    sessions = list(task.sessions.select_related("agent_profile"))
    current = sessions[0] if sessions else None
    execution = services.live_execution(current) if current else None
    return {
        "task": task,
        "card": cards_for(Task.objects.filter(pk=task.pk))[0],
        "sessions": sessions,
        "current_session": current,
        "agent_live": execution is not None,
        "stream_connected": execution is not None and execution.stream_connected,
        "turn_open": bool(current and current.turns.filter(completed_at__isnull=True).exists()),
        "start_form": StartSessionForm(task=task),
        "clarifications": clarifications.pending_for_task(task.pk),
        "messages": list(Message.objects.filter(session__task=task).order_by("created_at", "pk")) if with_messages else [],
    }


def task_list_context(task: Task) -> dict:
    rows = cards_for(Task.objects.filter(board=task.board_id).order_by("step__position", "position", "pk"))
    return {"current_task_id": task.pk, "rows": rows}


def render_task_rows(board_id: int, current_task_id: int, task_ids) -> str:
    """The live patch of a task page's task list: only the rows of ``task_ids``, each put in its place by app.js."""
    rows, gone = board_rows(board_id, task_ids)
    context = {"current_task_id": current_task_id, "rows": rows, "gone": gone}
    return render_to_string("sessions/task.html#task-rows-oob", context)


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
