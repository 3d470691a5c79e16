"""What a page's HTMX action answers when the element that asked must stay as it is.

The pages' actions change state and let the change reach every open view
through its socket, so their responses swap nothing in place: at most a
toast saying why nothing happened, and out-of-band patches.
"""

from django.http import HttpResponse
from django.template.loader import render_to_string


def patch(html: str, *, status: int = 200) -> HttpResponse:
    """A response that is only out-of-band content: the element that asked stays as it is."""
    response = HttpResponse(html, status=status)
    response["HX-Reswap"] = "none"
    return response


def toast_html(message, *, level="error", reason="") -> str:
    return render_to_string("base.html#toast", {"message": message, "level": level, "reason": reason})


def toast(message, *, level="error", status=200, reason="") -> HttpResponse:
    """The toast that says ``message``, and nothing else swapped."""
    return patch(toast_html(message, level=level, reason=reason), status=status)
