"""The task page and the operator's session actions.

Actions answer HTMX with nothing to swap (the change reaches every open view of
the task through its socket) or with a toast saying why nothing happened.
"""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST

from kandev_web.board import services as board_services
from kandev_web.board.models import Task
from kandev_web.pages.board.queries import column_page, parse_sort_key
from kandev_web.pages.htmx import toast
from kandev_web.sessions import services
from kandev_web.sessions.mcp_tokens import MCP_PATH
from kandev_web.sessions.models import TaskSession

from .forms import BudgetForm, ModeForm, OptionForm, PromptForm, StartSessionForm, first_error
from .fragments import task_context, task_list_context


def _task(request, task_id) -> Task:
    return get_object_or_404(Task.objects.for_user(request.user).select_related("board", "step"), pk=task_id)


def _session(request, session_id) -> TaskSession:
    return get_object_or_404(TaskSession.objects.for_user(request.user).select_related("task__board"), pk=session_id)


@require_GET
def task_detail(request, task_id):
    task = _task(request, task_id)
    task_list = task_list_context(task)
    return render(request, "sessions/task.html", task_context(task, card=task_list["current_card"]) | task_list)


@require_POST
def task_budget(request, task_id):
    """Set or clear the task's budget; every open view of the task and its card hears of it on its socket."""
    task = _task(request, task_id)
    form = BudgetForm(request.POST)
    if not form.is_valid():
        return toast(first_error(form))
    board_services.set_budget(task, form.cleaned_data["budget"])
    return HttpResponse(status=204)


@require_GET
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
        return toast(first_error(form))
    profile, prompt = form.cleaned_data["profile"], form.cleaned_data["prompt"]
    return _act(services.start_session, task, profile, prompt, _mcp_url(request))


def _mcp_url(request) -> str:
    """Where the agent is told to send its questions, with its session's token.

    ``KANDEV_MCP_URL`` (or ``KANDEV_PUBLIC_URL``'s /mcp/); never the request's
    Host header, which any client sets: an operator could otherwise point the
    agent, token and all, at a port of their choosing. Without one (dev and e2e
    only, prod refuses to start) it is the address this server was reached on,
    which the server's own socket reports, not the client.
    """
    if settings.KANDEV_MCP_URL:
        return settings.KANDEV_MCP_URL
    if settings.IS_PROD:
        raise ImproperlyConfigured("Set KANDEV_MCP_URL or KANDEV_PUBLIC_URL: the prod profile has no default.")
    host, port = request.META.get("SERVER_NAME", ""), request.META.get("SERVER_PORT", "")
    if not port.isdigit() or host in ("", "unknown"):
        host, port = "127.0.0.1", "8000"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


def _act(action, *args) -> HttpResponse:
    try:
        action(*args)
    except services.AlreadySettled as error:
        return toast(str(error), level="info")
    except services.TurnOpen as error:
        return toast(str(error), level="info", reason="turn_open")
    except services.SessionActionError as error:
        return toast(str(error))
    return HttpResponse(status=204)


@require_POST
def session_prompt(request, session_id):
    session = _session(request, session_id)
    form = PromptForm(request.POST)
    if not form.is_valid():
        return toast(first_error(form))
    return _act(services.send_prompt, session, form.cleaned_data["prompt"])


@require_POST
def session_cancel(request, session_id):
    return _act(services.cancel_turn, _session(request, session_id))


@require_POST
def session_mode(request, session_id):
    """The composer's mode picker: the agent works in the chosen mode from now on."""
    session = _session(request, session_id)
    form = ModeForm(request.POST, session=session)
    if not form.is_valid():
        return toast(first_error(form))
    return _act(services.set_mode, session, form.cleaned_data["mode"])


@require_POST
def session_option(request, session_id):
    """One of the composer's on/off toggles: the agent's option set as the toggle now reads."""
    session = _session(request, session_id)
    form = OptionForm(request.POST, session=session)
    if not form.is_valid():
        return toast(first_error(form))
    return _act(services.set_config_option, session, form.cleaned_data["option"], form.cleaned_data["value"])


@require_POST
def session_stop(request, session_id):
    return _act(services.stop_session, _session(request, session_id))


@require_POST
def session_resume(request, session_id):
    return _act(services.resume_session, _session(request, session_id), _mcp_url(request))


@require_POST
def permission_respond(request, session_id, pending_id):
    session = _session(request, session_id)
    option_id = request.POST.get("option_id") or None
    return _act(services.respond_permission, session, pending_id, option_id)
