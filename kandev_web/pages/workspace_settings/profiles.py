"""The workspace's agent profiles page: add, edit, check and remove them (the workspace's admins).

Adding and editing are plain forms (post, then redirect back); checking is an
async view, so the seconds an agent takes to answer ``initialize`` are awaited
on the server's loop without holding a request thread (``profile_checks``).
"""

from asgiref.sync import sync_to_async
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from kandev_web.agents import check_report, presets
from kandev_web.agents.models import AgentProfile
from kandev_web.agents.profile_forms import AgentProfileForm
from kandev_web.board.workspaces import managed_workspace, workspace_admin_required
from kandev_web.sessions import profile_checks
from kandev_web.sessions.models import ACTIVE_SESSION_STATES

TEMPLATE = "sessions/profiles.html"


def _profile(user, workspace_id, profile_id) -> AgentProfile:
    return get_object_or_404(
        AgentProfile.objects.for_user(user).select_related("executor"), workspace=workspace_id, pk=profile_id
    )


def _page(request, workspace, form, *, editing=None, status=200):
    profiles = AgentProfile.objects.filter(workspace=workspace).select_related("executor")
    profiles = profiles.annotate(
        session_count=Count("sessions"),
        active_count=Count("sessions", filter=Q(sessions__state__in=ACTIVE_SESSION_STATES)),
    )
    context = {
        "workspace": workspace,
        "profiles": [(profile, check_report.report(profile.last_check, profile.agent_id)) for profile in profiles],
        "form": form,
        "editing": editing,
        "presets": presets.PRESETS,
    }
    return render(request, TEMPLATE, context, status=status)


def _new_form(workspace, preset_key: str) -> AgentProfileForm:
    form = AgentProfileForm(workspace=workspace)
    chosen = presets.preset(preset_key)
    if chosen is not None:
        form.fill_from(chosen)
    form.preset = chosen
    return form


@workspace_admin_required
@require_GET
def profiles(request, workspace_id):
    workspace = managed_workspace(request.user, workspace_id)
    return _page(request, workspace, _new_form(workspace, request.GET.get("preset", "")))


@workspace_admin_required
@require_http_methods(["GET", "POST"])
def profile_new(request, workspace_id):
    """GET (htmx, on a preset's choice): the new profile's form filled from it. POST: add the profile."""
    workspace = managed_workspace(request.user, workspace_id)
    if request.method == "GET":
        form = _new_form(workspace, request.GET.get("preset", ""))
        context = {"workspace": workspace, "form": form, "presets": presets.PRESETS}
        return render(request, f"{TEMPLATE}#profile-form", context)
    form = AgentProfileForm(request.POST, workspace=workspace)
    if not form.is_valid():
        return _page(request, workspace, form)
    profile = form.save()
    return redirect(_anchor(workspace, profile))


@workspace_admin_required
@require_http_methods(["GET", "POST"])
def profile_edit(request, workspace_id, profile_id):
    workspace = managed_workspace(request.user, workspace_id)
    profile = _profile(request.user, workspace_id, profile_id)
    form = AgentProfileForm(request.POST or None, instance=profile, workspace=workspace)
    if request.method == "POST" and form.is_valid():
        form.save()
        return redirect(_anchor(workspace, profile))
    return _page(request, workspace, form, editing=profile)


@workspace_admin_required
@require_POST
def profile_delete(request, workspace_id, profile_id):
    """Sessions that used it stay on their tasks, unnamed (``SET_NULL``); the page said so before the click."""
    workspace = managed_workspace(request.user, workspace_id)
    _profile(request.user, workspace_id, profile_id).delete()
    return redirect(reverse("sessions:profiles", args=[workspace.pk]))


@workspace_admin_required
@require_POST
async def profile_check(request, workspace_id, profile_id):
    user = await request.auser()
    profile = await sync_to_async(_profile)(user, workspace_id, profile_id)
    spec = await sync_to_async(profile_checks.spec_for)(profile)
    outcome = await profile_checks.run_check(spec)
    checked = await sync_to_async(profile_checks.record)(profile.pk, outcome)
    if checked is None:  # removed while it was checked
        return redirect(reverse("sessions:profiles", args=[workspace_id]))
    if not request.headers.get("HX-Request"):
        return redirect(f"{reverse('sessions:profiles', args=[workspace_id])}#profile-{checked.pk}")
    context = {"profile": checked, "report": check_report.report(checked.last_check, checked.agent_id)}
    return await sync_to_async(render)(request, f"{TEMPLATE}#check", context)


def _anchor(workspace, profile) -> str:
    return f"{reverse('sessions:profiles', args=[workspace.pk])}#profile-{profile.pk}"
