"""Who may change what the whole deployment shares: superusers only.

Feature flags, ``/metrics`` without its token, a repository outside
``KANDEV_REPOSITORY_ROOTS``: each reaches past any one workspace, so
Django's ``is_superuser`` decides, never ``is_staff`` (which only opens
Django's admin site) nor a workspace role. A workspace's own settings are its
admins' (``kandev_web.board.workspaces.workspace_admin_required``). Login
is required everywhere already (``LoginRequiredMiddleware``); anyone else gets 403.
"""

from functools import wraps

from asgiref.sync import iscoroutinefunction
from django.core.exceptions import PermissionDenied


def superuser_required(view):
    if iscoroutinefunction(view):

        @wraps(view)
        async def async_wrapper(request, *args, **kwargs):
            if not (await request.auser()).is_superuser:
                raise PermissionDenied
            return await view(request, *args, **kwargs)

        return async_wrapper

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_superuser:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper
