"""The workspace a settings page manages, for every app that has one (agents, repositories, webhooks).

Here, beside the workspace, so those apps share the lookup and the check
without knowing each other. A workspace's settings are its admins' (the
``admin`` role of its ``Membership``; a superuser counts as admin of the
workspaces they are in): someone outside the workspace gets 404, as for any
of its objects; a member who is not an admin, 403.
"""

from functools import wraps

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from .models import Workspace


def managed_workspace(user, workspace_id) -> Workspace:
    """The workspace ``user`` manages on a settings page: 404 unless a member, 403 unless an admin of it."""
    workspace = get_object_or_404(Workspace.objects.for_user(user), pk=workspace_id)
    if not Workspace.objects.administered_by(user).filter(pk=workspace.pk).exists():
        raise PermissionDenied
    return workspace


def manages(user, workspace_id) -> bool:
    """Whether ``user`` sees the workspace's settings links (pages check again with ``managed_workspace``)."""
    return user.is_authenticated and Workspace.objects.administered_by(user).filter(pk=workspace_id).exists()


def workspace_admin_required(view):
    """For a view whose URL names ``workspace_id``: only that workspace's admins reach it (sync or async)."""
    if iscoroutinefunction(view):

        @wraps(view)
        async def async_wrapper(request, *args, **kwargs):
            await sync_to_async(managed_workspace)(await request.auser(), kwargs["workspace_id"])
            return await view(request, *args, **kwargs)

        return async_wrapper

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        managed_workspace(request.user, kwargs["workspace_id"])
        return view(request, *args, **kwargs)

    return wrapper
