"""What an operator sees when django-axes has locked their login out (``AXES_LOCKOUT_CALLABLE``).

Both login pages (``/login/`` and ``/admin/login/``) answer a locked-out
attempt with kandev's login page saying so, how long it lasts and who can lift
it, instead of axes' bare text: the operator is left on a page they can use
once the cool-off is over.
"""

from datetime import timedelta

from django.conf import settings
from django.shortcuts import render
from django.utils.translation import ngettext

#: Too Many Requests: the attempt was refused for how many came before it, not for what it said.
LOCKED_OUT_STATUS = 429


def lockout_message(cooloff: timedelta | None) -> str:
    """The sentence for a lockout lasting ``cooloff`` after the last attempt (``None``: until reset)."""
    if cooloff is None:
        return ngettext(
            "Login is locked after %(count)d failed attempt. An administrator must reset it.",
            "Login is locked after %(count)d failed attempts. An administrator must reset it.",
            settings.AXES_FAILURE_LIMIT,
        ) % {"count": settings.AXES_FAILURE_LIMIT}
    minutes = max(1, round(cooloff.total_seconds() / 60))
    return ngettext(
        "Too many failed attempts: login with this username is locked for %(minutes)d minute. "
        "Try again then, or ask an administrator to reset it.",
        "Too many failed attempts: login with this username is locked for %(minutes)d minutes. "
        "Try again then, or ask an administrator to reset it.",
        minutes,
    ) % {"minutes": minutes}


def locked_out(request, original_response=None, credentials=None):
    """The login page with the lockout sentence; axes calls it for every attempt while the lockout lasts.

    The arguments past ``request`` are unused: axes' async middleware passes
    them in another order than its sync one.
    """
    context = {
        "lockout_message": lockout_message(settings.AXES_COOLOFF_TIME),
        "next": request.POST.get("next") or request.GET.get("next", ""),
    }
    return render(request, "registration/login.html", context, status=LOCKED_OUT_STATUS)
