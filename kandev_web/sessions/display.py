"""What a session tells the operator of its state: the badge they can act on, and why Send is off.

The stored state follows Kandev, where ``WAITING_FOR_INPUT`` means three
things: a finished turn, a permission request and a blocking question
(``docs/decisions/notifications.md#readable-session-states``). The badge tells them apart
with the pending action (``pending.py``) and whether the current turn is open.
While a turn is open the composer's Send is off and the server refuses a
prompt, both with :func:`turn_open_reason`. Pure functions of plain values, so
the task page, its live fragments, the server's refusal and the tests agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.utils.translation import gettext_lazy as _

from .models import SessionState
from .pending import CLARIFICATION, PERMISSION, PendingAction

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


class DisplayState(models.TextChoices):
    STARTING = "starting", _("Starting")
    RUNNING = "running", _("Running")
    NEEDS_ANSWER = "needs-answer", _("Needs your answer")
    NEEDS_PERMISSION = "needs-permission", _("Needs your permission")
    READY = "ready", _("Ready for a follow-up")
    FAILED = "failed", _("Failed")
    STOPPED = "stopped", _("Stopped")


def display_state(state: str, *, pending_action: PendingAction, turn_open: bool) -> DisplayState:
    """The badge of a session in ``state`` that waits for ``pending_action``, its current turn open or not.

    An ended session says how it ended, whatever it left pending; a live one
    says first what it needs from an operator.
    """
    if state == SessionState.FAILED:
        return DisplayState.FAILED
    if state in (SessionState.CANCELLED, SessionState.COMPLETED):
        return DisplayState.STOPPED
    if state in (SessionState.CREATED, SessionState.STARTING):
        return DisplayState.STARTING
    if pending_action == PERMISSION:
        return DisplayState.NEEDS_PERMISSION
    if pending_action == CLARIFICATION:
        return DisplayState.NEEDS_ANSWER
    if turn_open or state == SessionState.RUNNING:
        return DisplayState.RUNNING
    return DisplayState.READY


def turn_open_reason(pending_action: PendingAction) -> StrOrPromise:
    """Why a prompt cannot be sent now, in the operator's words, from what the open turn waits for."""
    if pending_action == PERMISSION:
        return _("The agent is waiting for your permission. Answer it first; your message is kept here.")
    if pending_action == CLARIFICATION:
        return _("The agent is waiting for your answer to its question. Answer it first; your message is kept here.")
    return _("The agent is still working on its turn. Wait for it to end or cancel it; your message is kept here.")
