"""The workspace a settings page manages, for every app that has one (agents, repositories, webhooks).

Here, beside the workspace, so those apps share the lookup without knowing
each other; ``kandev_web.staff`` decides who may reach the page at all.
"""

from django.shortcuts import get_object_or_404

from .models import Workspace


def managed_workspace(user, workspace_id) -> Workspace:
    """The workspace a staff member manages on a settings page: one they are a member of (else 404)."""
    return get_object_or_404(Workspace.objects.for_user(user), pk=workspace_id)
