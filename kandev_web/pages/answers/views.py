"""The operator's answer to a clarification over HTTP, for clients without JavaScript and API use.

The browser sends answers on the task page's socket instead (``TaskConsumer``);
both go through ``answering.answer``.
"""

from asgiref.sync import async_to_sync
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_POST

from kandev_web.clarifications import answering
from kandev_web.clarifications.models import Surface
from kandev_web.clarifications.settlement import Answerer
from kandev_web.pages.htmx import toast


@require_POST
def respond(request, pending_id):
    try:
        record = answering.question_for(request.user, pending_id)
    except answering.UnknownQuestion:
        raise Http404 from None
    skipped = request.POST.get("action") == "skip"
    # The overlay's form posts here with ?via=form when the page has no
    # JavaScript; anything else is a client of the API.
    surface = Surface.FORM if request.GET.get("via") == "form" else Surface.API
    # Awaited on the server loop, like the socket's answers; this request's
    # thread waits for it, no other.
    delivery = async_to_sync(answering.answer)(
        record,
        answers=[] if skipped else answering.form_answers(record.questions, request.POST.getlist),
        rejected=skipped,
        reject_reason=request.POST.get("reject_reason", ""),
        answerer=Answerer.of(request.user, surface),
    )
    if delivery.message:
        return toast(delivery.message, level=delivery.level)
    return HttpResponse(status=204)
