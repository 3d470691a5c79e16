from functools import cache

from .queries import waiting_count


def waiting(request):
    """``waiting_count`` for the navigation and the tab title, counted only when a page shows it, once."""
    if not request.user.is_authenticated:
        return {}
    return {"waiting_count": cache(lambda: waiting_count(request.user))}
