"""The operator's answer to a clarification, from the overlay."""

from django.http import Http404, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from kandev_web.sessions.views import toast

from . import services
from .models import Clarification, Source
from .validation import InvalidBundle


def answers_from_form(record: Clarification, data) -> list[dict]:
    """The overlay posts ``answer-<question id>-option`` and ``answer-<question id>-custom`` per question."""
    answers = []
    for question in record.questions:
        qid = question["id"]
        selected = [value for value in data.getlist(f"answer-{qid}-option") if value]
        custom = data.get(f"answer-{qid}-custom", "").strip()
        if selected or custom:
            answers.append({"question_id": qid, "selected_options": selected, "custom_text": custom})
    return answers


@require_POST
def respond(request, pending_id):
    record = Clarification.objects.filter(
        pending_id=pending_id, session__task__board__workspace__members=request.user
    ).first()
    if record is None:
        raise Http404
    skipped = request.POST.get("action") == "skip"
    answers = [] if skipped else answers_from_form(record, request.POST)
    reason = request.POST.get("reject_reason", "")
    if record.source == Source.ELICITATION:
        delivery = services.submit(record, answers=answers, rejected=skipped, reject_reason=reason)
        if delivery.delivered:
            return HttpResponse(status=204)
        return toast(delivery.message, level=delivery.level)
    try:
        outcome = services.submit(record, answers=answers, rejected=skipped, reject_reason=reason)
    except services.AlreadyAnswered:
        return toast(_("This question was already answered."), level="info")
    except InvalidBundle as invalid:
        return toast(_("Your answer could not be used: %(errors)s") % {"errors": "; ".join(invalid.errors)})
    if outcome.record.agent_disconnected:
        message = (
            _("The agent had moved on; your answer was sent as a new message.")
            if outcome.resumed
            else _("The agent is gone; your answer was recorded but not delivered.")
        )
        return toast(message, level="info")
    return HttpResponse(status=204)
