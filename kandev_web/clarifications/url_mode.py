"""URL-mode elicitations on the web side: a page the agent asks the operator to open.

agentctl lets through only addresses an operator may be shown (``elicitation.url``)
and announces them with no questions; here one question of kind ``url`` is
kept on the record, so that every surface that lists a question (timeline,
inbox, board, notifications, webhooks) lists this one by the agent's message,
never by its address: the address is shown only where the operator can open
it, on the question's card (``docs/decisions/url-mode.md``).
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kandev_web.agentctl.elicitation.url import url_host, url_problem
from kandev_web.sessions import events
from kandev_web.sessions.models import AuthorType, MessageType, TaskSession

from . import records
from .models import Clarification, Mode, Status

#: ``elicitation.declined``'s reason for an address the operator may not be shown.
DECLINED_URL = "url_refused"

#: ``settled_reason`` once the agent said an accepted sign-in finished.
SIGN_IN_FINISHED = "sign_in_finished"

#: Why an address was refused, by agentctl's code (``UrlProblem``): the sentence the timeline shows.
REFUSED = {
    "not_https": gettext_lazy("it was not an https address"),
    "http_not_loopback": gettext_lazy("it was a plain http address to another machine; only https is opened"),
    "http_loopback_not_allowed": gettext_lazy("plain http to this machine is allowed only in development"),
    "credentials": gettext_lazy("it had a user name or password in it, which can disguise where it goes"),
    "too_long": gettext_lazy("it was too long"),
    "malformed": gettext_lazy("it was not a well-formed address"),
}


def is_url(payload: dict) -> bool:
    return payload.get("mode") == Mode.URL


def record_fields(payload: dict) -> dict:
    """The record's fields for a URL request: its mode and address, and its one question (the agent's message)."""
    url = payload.get("url") or ""
    question: dict[str, object] = {
        "id": "url",
        "title": None,
        "prompt": payload.get("message") or url_host(url),
        "kind": "url",
        "accepts_text": False,
        "sensitive": False,
        "options": [],
    }
    return {
        "mode": Mode.URL,
        "url": url,
        "elicitation_id": payload.get("elicitation_id") or "",
        "questions": [question],
    }


@transaction.atomic
def record_refused(session_id: int, payload: dict) -> None:
    """The agent asked the operator to open an address agentctl refused: the timeline says so, and why."""
    why = REFUSED.get(str(payload.get("problem")), REFUSED["malformed"])
    session = TaskSession.objects.select_for_update().get(pk=session_id)
    events.add_message(
        session,
        type=MessageType.STATUS,
        author=AuthorType.SYSTEM,
        content=_("The agent asked you to open a page, and kandev declined it: %(why)s.") % {"why": why},
        metadata={"notice": DECLINED_URL, "problem": str(payload.get("problem", ""))},
    )


@transaction.atomic
def record_completed(payload: dict) -> None:
    """The agent said the page the operator opened has done its work: every view of it says "Sign-in finished".

    agentctl has settled a request still open before this arrives (``agent_completed``),
    so the card is gone everywhere already; an accepted one keeps its answer and
    is marked finished. Unknown ids, and ones already marked, are ignored.
    """
    record = (
        Clarification.objects.select_for_update()
        .filter(pending_id=payload.get("pending_id"), mode=Mode.URL, completed_at__isnull=True)
        .first()
    )
    if record is None or record.status == Status.PENDING:
        return
    record.completed_at = timezone.now()
    fields = ["completed_at"]
    if record.status == Status.ANSWERED:
        record.settled_reason = SIGN_IN_FINISHED
        fields.append("settled_reason")
    record.save(update_fields=fields)
    transaction.on_commit(lambda: records.messages_changed(record))


@dataclass(frozen=True)
class ShownUrl:
    """An address as its card shows it: the host apart, to be emphasised; ``openable`` whether it gets a link."""

    before: str
    host: str
    after: str
    openable: bool


def shown_url(url: str) -> ShownUrl:
    """Split ``url`` around its host for the card, and judge it again before it becomes a link.

    agentctl has judged it already; judging it here too keeps a link off the
    page should a record ever hold anything else (say, written by an older agentctl).
    """
    openable = url_problem(url, allow_http_loopback=settings.DEBUG) is None
    host = url_host(url) if openable else ""
    if not host:
        return ShownUrl(url, "", "", False)
    netloc = urlsplit(url).netloc
    start = url.find(netloc)
    at = url.lower().find(host, start)
    if at < 0:
        return ShownUrl(url, "", "", openable)
    return ShownUrl(url[:at], url[at : at + len(host)], url[at + len(host) :], openable)
