"""Why a question ended, who answered it and from where: the sentence every view of it shows.

The record keeps the facts (``settled_reason``, ``responded_at``,
``answered_by``, ``answered_via``, ``answered_from``), and its timeline rows
read them there (``timeline``); this turns them into what one viewer reads, in the
timeline ("Answered by demo in another tab at 10:02") and in the notice a tab
gets when its overlay goes away ("This question was already answered by demo
in another tab at 10:02."). "This tab" and "another tab" are relative to the
viewer, so the task page's answers carry an opaque id of the live connection
they came on (:func:`tab_id`). Pure: the caller reads the record and says who
is looking.
"""

import hashlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.utils.timesince import timesince
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .models import Status, Surface

#: Reasons under which an operator's answer or Skip settled a question.
OPERATOR_REASONS = frozenset({"operator", "operator_skipped", "undelivered"})


def tab_id(channel_name: str) -> str:
    """The opaque id a task page's live connection leaves on the questions it answered."""
    return hashlib.sha256(channel_name.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Answerer:
    """Who sent an answer, through which surface (``Surface``), and for the task page from which of its pages."""

    user_id: int
    username: str
    surface: str
    tab: str = ""

    @classmethod
    def of(cls, user, surface: str, tab: str = "") -> "Answerer":
        return cls(user.pk, user.get_username(), surface, tab)


@dataclass(frozen=True)
class Ending:
    """What is known of how a question ended, as stored on its record."""

    status: str
    reason: str = ""
    answered_by: str = ""
    answered_via: str = ""
    answered_from: str = ""
    asked_at: datetime | None = None
    settled_at: datetime | None = None


@dataclass(frozen=True)
class Settlement:
    """The sentence one viewer reads, and when it happened (rendered with the viewer's locale, beside it)."""

    sentence: str
    #: ``this_tab``, ``another_tab``, ``inbox``, ``board``, ``form``, ``api``, or empty when no operator
    #: ended it (or nobody knows who).
    where: str
    at: datetime | None
    #: Whether ``at`` is on the viewer's today (then its time alone is shown).
    today: bool = True
    #: The notice a tab gets when its overlay goes away (a whole sentence) rather than the timeline's line.
    notice: bool = False


def describe(
    ending: Ending, *, viewer_tab: str = "", notice: bool = False, today: date | None = None
) -> Settlement | None:
    """How the question ended, for a viewer on the page whose live connection is ``viewer_tab``; None while open.

    ``today`` is the viewer's date, so a question settled on another day shows its date too.
    """
    if ending.status == Status.PENDING:
        return None
    on_today = today is None or ending.settled_at is None or ending.settled_at.date() == today
    where = _where(ending, viewer_tab)
    if ending.reason in SIGN_IN_REASONS:
        sentence = str(SIGN_IN_REASONS[ending.reason])
    elif ending.reason in OPERATOR_REASONS or ending.status in (Status.ANSWERED, Status.REJECTED):
        sentence = _by_operator(ending, where, notice)
    elif ending.status == Status.EXPIRED:
        waited = _waited(ending)
        if waited:
            sentence = _("Timed out after %(duration)s with no answer") % {"duration": waited}
        else:
            sentence = _("Timed out with no answer")
    else:
        sentence = str(WITHDRAWN.get(ending.reason, "")) or _("Withdrawn")
    return Settlement(str(sentence), where, ending.settled_at, on_today, notice)


#: The surfaces whose answers come on a page's socket, which leaves its tab id on them.
LIVE_SURFACES = (Surface.TASK_PAGE, Surface.INBOX, Surface.BOARD)


def _where(ending: Ending, viewer_tab: str) -> str:
    if not ending.answered_by:
        return ""
    if ending.answered_via in LIVE_SURFACES and viewer_tab and ending.answered_from == viewer_tab:
        return "this_tab"
    if ending.answered_via == Surface.TASK_PAGE:
        return "another_tab"
    return ending.answered_via


def _waited(ending: Ending) -> str:
    if ending.asked_at is None or ending.settled_at is None:
        return ""
    if ending.settled_at - ending.asked_at < timedelta(minutes=1):
        return ""
    return timesince(ending.asked_at, ending.settled_at)


def _by_operator(ending: Ending, where: str, notice: bool) -> str:
    skipped = ending.status == Status.REJECTED
    user = ending.answered_by
    if not where:
        sentence = _("Skipped") if skipped else _("Answered")
        if notice:
            sentence = _("This question was already skipped") if skipped else _("This question was already answered")
    elif notice:
        sentence = str((NOTICE_SKIPPED if skipped else NOTICE_ANSWERED)[where]) % {"user": user}
    else:
        sentence = str((SKIPPED if skipped else ANSWERED)[where]) % {"user": user}
    if ending.reason == "undelivered":
        sentence = _("%(what)s; not delivered: the agent was gone") % {"what": sentence}
    return sentence


ANSWERED = {
    "this_tab": gettext_lazy("Answered by %(user)s in this tab"),
    "another_tab": gettext_lazy("Answered by %(user)s in another tab"),
    "form": gettext_lazy("Answered by %(user)s through the HTML form"),
    "api": gettext_lazy("Answered by %(user)s through the API"),
    "inbox": gettext_lazy("Answered by %(user)s in the inbox"),
    "board": gettext_lazy("Answered by %(user)s on the board"),
}
SKIPPED = {
    "this_tab": gettext_lazy("Skipped by %(user)s in this tab"),
    "another_tab": gettext_lazy("Skipped by %(user)s in another tab"),
    "form": gettext_lazy("Skipped by %(user)s through the HTML form"),
    "api": gettext_lazy("Skipped by %(user)s through the API"),
    "inbox": gettext_lazy("Skipped by %(user)s in the inbox"),
    "board": gettext_lazy("Skipped by %(user)s on the board"),
}
NOTICE_ANSWERED = {
    "this_tab": gettext_lazy("This question was already answered by %(user)s in this tab"),
    "another_tab": gettext_lazy("This question was already answered by %(user)s in another tab"),
    "form": gettext_lazy("This question was already answered by %(user)s through the HTML form"),
    "api": gettext_lazy("This question was already answered by %(user)s through the API"),
    "inbox": gettext_lazy("This question was already answered by %(user)s in the inbox"),
    "board": gettext_lazy("This question was already answered by %(user)s on the board"),
}
NOTICE_SKIPPED = {
    "this_tab": gettext_lazy("This question was skipped by %(user)s in this tab"),
    "another_tab": gettext_lazy("This question was skipped by %(user)s in another tab"),
    "form": gettext_lazy("This question was skipped by %(user)s through the HTML form"),
    "api": gettext_lazy("This question was skipped by %(user)s through the API"),
    "inbox": gettext_lazy("This question was skipped by %(user)s in the inbox"),
    "board": gettext_lazy("This question was skipped by %(user)s on the board"),
}
#: A URL-mode request whose page did its work: accepted, then completed (``url_mode.SIGN_IN_FINISHED``), or
#: completed by the agent before anyone answered (agentctl's ``agent_completed``).
SIGN_IN_REASONS = {
    "sign_in_finished": gettext_lazy("Sign-in finished"),
    "agent_completed": gettext_lazy("Sign-in finished"),
}
#: Why a question went away without an operator's answer (agentctl's reasons).
WITHDRAWN = {
    "turn_cancelled": gettext_lazy("Withdrawn: the turn was cancelled"),
    "agent_cancelled_request": gettext_lazy("Withdrawn by the agent"),
    "agent_exited": gettext_lazy("Withdrawn: the agent exited"),
    "agentctl_shutdown": gettext_lazy("Withdrawn: the agent was stopped"),
    "gone": gettext_lazy("Withdrawn: the agent no longer has this question"),
    "agentctl_gone": gettext_lazy("Withdrawn: the agent stopped; this question can no longer be answered"),
}


def ending_of_record(record) -> Ending:
    """The ending as the record itself keeps it (``answered_by`` read with it)."""
    return Ending(
        status=record.status,
        reason=record.settled_reason,
        answered_by=record.answered_by.get_username() if record.answered_by is not None else "",
        answered_via=record.answered_via,
        answered_from=record.answered_from,
        asked_at=record.created_at,
        settled_at=record.responded_at,
    )
