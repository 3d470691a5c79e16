"""The review page of a task's branch, and its actions: comment, send the comments to the agent, push.

Access is the task page's: the task must be in one of the operator's
workspaces (another's is a 404, as on the task page). The branch's diff is
read where the repository is (``repositories.review``); these views only
say what came of it. Actions answer HTMX with the part of the page they
changed, or a toast when nothing happened.
"""

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from kandev_web.board.models import Task
from kandev_web.pages.htmx import toast
from kandev_web.repositories import review as reviews
from kandev_web.repositories.models import ReviewComment, Worktree
from kandev_web.sessions import services
from kandev_web.sessions.models import TaskSession

from .forms import CommentForm

TEMPLATE = "review/review.html"


def _worktree(request, task_id) -> Worktree:
    """The task's worktree, once it has a branch; a 404 for a task not the operator's, or with nothing to review."""
    task = get_object_or_404(Task.objects.for_user(request.user), pk=task_id)
    worktree = Worktree.objects.select_related("repository__executor", "task__board").filter(task=task).first()
    if worktree is None or not worktree.branch:
        raise Http404(_("This task has no branch to review."))
    return worktree


def _safe_lines(review_file: reviews.ReviewFile) -> reviews.ReviewFile:
    # Each line is Pygments' HTML (which escapes every character of the file) or escaped by repositories.review.
    for line in review_file.lines:
        line.html = mark_safe(line.html)  # noqa: S308
    return review_file


def _comments_context(worktree: Worktree) -> dict:
    comments = list(ReviewComment.objects.filter(task_id=worktree.task_id))
    return {
        "worktree": worktree,
        "task": worktree.task,
        "comments": comments,
        "unsent_count": sum(comment.sent_at is None for comment in comments),
    }


@require_GET
def review(request, task_id):
    """``?page=``'s files of the branch, its comments, and the push; what git could not read is said in a sentence."""
    worktree = _worktree(request, task_id)
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        return HttpResponseBadRequest()
    context = _comments_context(worktree) | {"page": None, "refusal": "", "pull_request_url": None}
    try:
        found = reviews.review_page(worktree, page)
    except reviews.ReviewError as error:
        context["refusal"] = str(error)
    else:
        for each in found.files:
            _safe_lines(each)
        context["page"] = found
    context["pull_request_url"] = reviews.pull_request_url(worktree)
    return render(request, TEMPLATE, context)


@require_GET
def more_lines(request, task_id):
    """A file's next window of lines ("Show more"), from ``?from=``."""
    worktree = _worktree(request, task_id)
    path = request.GET.get("path", "")
    try:
        start = int(request.GET.get("from", ""))
    except ValueError:
        return HttpResponseBadRequest()
    if not path or start < 0:
        return HttpResponseBadRequest()
    try:
        found = reviews.file_window(worktree, path, start)
    except reviews.ReviewError as error:
        return toast(str(error))
    if found is None:
        return toast(_("The branch no longer changes %(path)s: reload the page.") % {"path": path}, level="info")
    return render(request, f"{TEMPLATE}#lines", {"task": worktree.task, "file": _safe_lines(found)})


def _comments(request, worktree: Worktree) -> HttpResponse:
    return HttpResponse(render_to_string(f"{TEMPLATE}#comments", _comments_context(worktree), request=request))


@require_POST
def comment_add(request, task_id):
    worktree = _worktree(request, task_id)
    form = CommentForm(request.POST)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        label = form.fields[field].label if field in form.fields else ""
        return toast(f"{label}: {errors[0]}" if label else errors[0])
    data = form.cleaned_data
    reviews.add_comment(worktree, request.user, data["path"], data["line"], data["text"])
    return _comments(request, worktree)


@require_POST
def comment_delete(request, task_id, comment_id):
    worktree = _worktree(request, task_id)
    get_object_or_404(ReviewComment, task_id=worktree.task_id, pk=comment_id).delete()
    return _comments(request, worktree)


@require_POST
def send(request, task_id):
    """The unsent comments as one follow-up prompt to the task's latest session, as the task page's prompt form sends.

    Refused (a toast, the comments kept) when the task has no session, or
    its agent cannot take a prompt now (starting, ended, a turn open).
    """
    worktree = _worktree(request, task_id)
    session = TaskSession.objects.filter(task_id=worktree.task_id).first()
    if session is None:
        return toast(_("No agent has worked on this task yet: start one on the task page, then send the comments."))

    def deliver(prompt: str) -> None:
        services.send_prompt(session, prompt)

    try:
        sent = reviews.send_comments(worktree, deliver)
    except services.TurnOpen as error:
        return toast(str(error), level="info", reason="turn_open")
    except services.SessionActionError as error:
        return toast(str(error))
    if not sent:
        return toast(_("There are no comments to send."), level="info")
    return _comments(request, worktree)


@require_POST
def push(request, task_id):
    """Push the task's branch to the repository's push remote; the outcome replaces the last one shown."""
    worktree = _worktree(request, task_id)
    context = {"worktree": worktree, "task": worktree.task}
    try:
        context["pushed"] = reviews.push(worktree)
    except reviews.ReviewError as error:
        context["push_error"] = str(error)
    return render(request, f"{TEMPLATE}#push-outcome", context)
