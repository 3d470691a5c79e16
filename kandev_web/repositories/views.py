"""The workspace's repositories page: register and remove the git repositories its tasks work on (its admins).

Where a repository may be is the form's to check (``KANDEV_REPOSITORY_ROOTS``, superusers anywhere).
"""

from django.db.models import Count, ProtectedError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from kandev_web.board.workspaces import managed_workspace, workspace_admin_required

from .forms import PushRemoteForm, RepositoryForm
from .models import Repository

TEMPLATE = "sessions/repositories.html"


def _page(request, workspace, form, *, refusal="", status=200, push_form=None):
    repositories = list(
        Repository.objects.filter(workspace=workspace)
        .select_related("executor")
        .annotate(task_count=Count("worktrees"))
    )
    for repository in repositories:
        # Each card's push settings, the one just refused with its errors.
        mine = push_form is not None and push_form.repository.pk == repository.pk
        repository.push_form = push_form if mine else PushRemoteForm(repository=repository)
    context = {"workspace": workspace, "repositories": repositories, "form": form, "refusal": refusal}
    return render(request, TEMPLATE, context, status=status)


@workspace_admin_required
@require_http_methods(["GET", "POST"])
def repositories(request, workspace_id):
    """GET: the list and an empty form. POST: register one; its machine is asked whether it is a repository."""
    workspace = managed_workspace(request.user, workspace_id)
    form = RepositoryForm(request.POST or None, workspace=workspace, anywhere=request.user.is_superuser)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect(reverse("sessions:repositories", args=[workspace.pk]))
    return _page(request, workspace, form)


@workspace_admin_required
@require_POST
def repository_delete(request, workspace_id, repository_id):
    """Refused while a task works in one of its worktrees: the task would lose where its branch lives."""
    workspace = managed_workspace(request.user, workspace_id)
    repository = get_object_or_404(Repository, workspace=workspace, pk=repository_id)
    try:
        repository.delete()
    except ProtectedError:
        refusal = _("%(repository)s still has tasks on it; delete those tasks (and their worktrees) first.") % {
            "repository": repository
        }
        return _page(request, workspace, RepositoryForm(workspace=workspace), refusal=refusal, status=409)
    return redirect(reverse("sessions:repositories", args=[workspace.pk]))


@workspace_admin_required
@require_POST
def repository_push_remote(request, workspace_id, repository_id):
    """Set where tasks' branches are pushed, and the token for it; the token is never shown back."""
    workspace = managed_workspace(request.user, workspace_id)
    repository = get_object_or_404(Repository, workspace=workspace, pk=repository_id)
    form = PushRemoteForm(request.POST, repository=repository, anywhere=request.user.is_superuser)
    if not form.is_valid():
        return _page(request, workspace, RepositoryForm(workspace=workspace), push_form=form, status=400)
    form.save()
    return redirect(reverse("sessions:repositories", args=[workspace.pk]))
