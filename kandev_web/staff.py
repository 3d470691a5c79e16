"""The one staff check of the settings pages (feature toggles, agent profiles, repositories, webhooks).

Managing a workspace is not yet a permission of its own: staff only, for
sync and async views alike. Login is required everywhere already
(``LoginRequiredMiddleware``); an operator who is not staff gets 403.
"""

from functools import wraps

from asgiref.sync import iscoroutinefunction
from django.core.exceptions import PermissionDenied


def staff_required(view):
    if iscoroutinefunction(view):

        @wraps(view)
        async def async_wrapper(request, *args, **kwargs):
            if not (await request.auser()).is_staff:
                raise PermissionDenied
            return await view(request, *args, **kwargs)

        return async_wrapper

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper
