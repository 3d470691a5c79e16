"""The agent's ``elicitation/create`` requests, parked until an operator answers.

A form that maps to at least one question (``elicitation.map_elicitation``)
becomes a *pending elicitation*: a uuid4 ``pending_id`` (one per request, never
deduplicated: D4), announced to every client as ``elicitation.requested``,
while the agent's JSON-RPC request stays open. It ends in exactly one of these
ways, each reported once as ``elicitation.settled`` (``docs/decisions/life-of-a-question.md#f7-settlement``):

| what happened                      | ACP result  | outcome / reason                      |
|------------------------------------|-------------|---------------------------------------|
| ``agent.elicitations.respond``     | ``accept``  | ``accepted`` / ``operator``           |
| the same with ``rejected: true``   | ``decline`` | ``declined`` / ``operator_skipped``   |
| ``KANDEV_ELICITATION_ANSWER_TIMEOUT`` | ``decline`` | ``declined`` / ``answer_timeout`` (AC-64) |
| ``agent.cancel`` of its session    | ``cancel``  | ``cancelled`` / ``turn_cancelled`` (AC-15) |
| the agent's ``$/cancel_request``   | ``cancel``  | ``cancelled`` / ``agent_cancelled_request`` |
| the agent process ending           | ``cancel``* | ``cancelled`` / ``agent_exited``      |
| ``agent.shutdown`` or SIGTERM      | ``cancel``  | ``cancelled`` / ``agentctl_shutdown`` |

(* written only if the agent can still read it.)

A URL-mode request (``features.acpUrlElicitation`` on as well) is parked the
same way, with no questions and the additions ``mode``, ``url`` and
``elicitation_id`` in its announcement; the operator's accept is consent,
``{"action": "accept"}`` with no content. An address the operator may not be
shown (``elicitation.url``) is declined at once and reported as
``elicitation.declined`` with reason ``url_refused`` and the problem's code. The
agent's later ``elicitation/complete`` for an accepted one is announced as
``elicitation.completed``; for one still open it settles it first
(``cancelled`` / ``agent_completed``); unknown and finished ids are ignored
(``docs/decisions/url-mode.md``).

Everything else is answered ``decline`` at once and announced to nobody
(AC-16, 17, 18, 20): the flag off for this execution, url mode, a request
scope, a malformed body, a session that is not this agent's, a form over the
limits, or one with no question the mapping recognises. Only the first of
these is reported, as ``elicitation.declined`` (no question text, only the
session and the reason), so that the operator can be told once that an agent
asked and nobody was shown the question
(``docs/decisions/mapping.md#declined-while-the-flag-is-off``).

Settling is synchronous and pops the pending first, so whichever ending comes
first is the only one: of any number of concurrent answers exactly one wins,
and the others find nothing (``NOT_FOUND``, D5). Nothing here logs question
text, answers or anything else the operator typed; they may be secrets.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import OrderedDict
from collections.abc import Set
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from kandev_web.agentctl.elicitation import (
    Decline,
    MappedForm,
    build_response,
    cancel_response,
    decline_response,
    map_elicitation,
    normalise,
    reported_response,
    validate_answers,
)
from kandev_web.agentctl.elicitation.url import UrlRequest, is_url_mode, read_url_request
from kandev_web.agentctl.envelope import MAX_FRAME_BYTES, ActionError, Emit, ErrorCode, Payload
from kandev_web.agentctl.jsonrpc import JsonRpcId

logger = logging.getLogger(__name__)

#: The largest ``elicitation.requested`` payload: a frame's limit, less room for the
#: envelope around it. A form's request message is the prompt of every question
#: without a description, so a request under the 1 MiB params limit can announce
#: far more than that.
MAX_ANNOUNCEMENT_BYTES = MAX_FRAME_BYTES - 1024

#: The longest ``answer_ref`` a respond may carry: an opaque id, not a place for content.
MAX_ANSWER_REF_CHARS = 64

#: How many accepted URL requests are remembered for their ``elicitation/complete``: the
#: agent may never send one, and an agent that asks without end must not grow agentctl.
MAX_AWAITING_COMPLETION = 256

#: Why every pending elicitation of the process is being settled at once.
EndReason = Literal["agent_exited", "agentctl_shutdown"]

Outcome = Literal["accepted", "declined", "cancelled"]
Reason = Literal[
    "operator",
    "operator_skipped",
    "answer_timeout",
    "turn_cancelled",
    "agent_cancelled_request",
    "agent_exited",
    "agentctl_shutdown",
    "agent_completed",
]


@dataclass
class _Pending:
    id: str
    #: The mapped form, or for URL mode the request (no questions; accept is consent).
    form: MappedForm | UrlRequest
    request_id: JsonRpcId
    announcement: Payload
    #: The ACP result to write back; set exactly once, by ``_settle``.
    answer: asyncio.Future[dict[str, Any]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    #: Set once ``create`` has returned, i.e. once the result has been written.
    delivered: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None

    @property
    def session_id(self) -> str:
        return self.form.session_id


class ElicitationHandler:
    """Holds the open form elicitations of one agent process.

    ``enabled`` is ``features.acpElicitation`` as the web app passed it in
    ``agent.initialize`` (``docs/decisions/across-processes.md#f5-the-flag-crosses-processes``);
    ``sessions`` is the live set of this agent's session ids; ``answer_timeout``
    is how long an operator may take.
    """

    def __init__(
        self,
        emit: Emit,
        *,
        enabled: bool,
        answer_timeout: timedelta,
        sessions: Set[str],
        url_enabled: bool = False,
        allow_http_loopback: bool = False,
    ) -> None:
        self.emit = emit
        self.enabled = enabled
        #: ``features.acpUrlElicitation`` (only ever true with ``enabled``), and whether
        #: ``http`` to loopback may be shown (the web app's development setting).
        self.url_enabled = enabled and url_enabled
        self.allow_http_loopback = allow_http_loopback
        self.answer_timeout = answer_timeout
        self.sessions = sessions
        self._pending: dict[str, _Pending] = {}
        #: Accepted URL requests by ``elicitationId``: (pending_id, session_id), oldest first.
        self._awaiting_completion: OrderedDict[str, tuple[str, str]] = OrderedDict()

    # The agent's side -----------------------------------------------------

    async def create(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        """Answer an ``elicitation/create`` request from the agent.

        The JSON-RPC layer starts this eagerly and writes the returned result to
        the agent right after it returns, with no await in between; so the
        pending is parked (and announced) before the agent's next frame is read,
        and ``delivered`` is set only once the answer is on its way.
        """
        if self.url_enabled and is_url_mode(params):
            pending = self._park_url(params, request_id)
        else:
            pending = self._park(params, request_id)
        if pending is None:
            return decline_response()
        try:
            return await pending.answer
        finally:
            # Cancelled from outside: the agent closed its stdout, so it is gone.
            self._settle(pending, cancel_response(), "cancelled", "agent_exited")
            pending.delivered.set()

    def cancel_request(self, request_id: JsonRpcId) -> bool:
        """The agent withdrew a request with ``$/cancel_request``; True if it was ours.

        The request is still answered, ``cancel``: ACP requires an answer to a
        withdrawn request, and ``cancel`` is what the bridge expects.
        """
        for pending in self._pending.values():
            if pending.request_id == request_id:
                self._settle(pending, cancel_response(), "cancelled", "agent_cancelled_request")
                return True
        return False

    def complete(self, params: Any) -> None:
        """The agent's ``elicitation/complete`` notification: the page the operator opened has done its work.

        Announced once as ``elicitation.completed``. For a request the operator
        has not answered yet, the request is settled first (``cancel``: nothing
        is left to consent to). Unknown and finished ids are ignored, as ACP
        requires; so is everything with URL mode off, where the agent was never
        told kandev understands it.
        """
        elicitation_id = params.get("elicitationId") if isinstance(params, dict) else None
        if not self.url_enabled or not isinstance(elicitation_id, str):
            logger.debug("elicitation/complete ignored")
            return
        awaiting = self._awaiting_completion.pop(elicitation_id, None)
        if awaiting is None:
            for pending in self._pending.values():
                if isinstance(pending.form, UrlRequest) and pending.form.elicitation_id == elicitation_id:
                    self._settle(pending, cancel_response(), "cancelled", "agent_completed")
                    awaiting = (pending.id, pending.session_id)
                    break
        if awaiting is None:
            logger.debug("elicitation/complete names no open or accepted URL request; ignored")
            return
        pending_id, session_id = awaiting
        logger.info("elicitation %s completed", pending_id)
        self.emit(
            "elicitation.completed",
            {"pending_id": pending_id, "elicitation_id": elicitation_id, "session_id": session_id},
        )

    # The operator's side --------------------------------------------------

    def list(self) -> list[Payload]:
        """The open elicitations, as their ``elicitation.requested`` payloads, oldest first."""
        return [pending.announcement for pending in self._pending.values()]

    async def respond(self, payload: Payload) -> Payload:
        """Handle ``agent.elicitations.respond``.

        Everything up to settling is synchronous, so two answers racing for one
        pending cannot both pass the lookup. Returns once the ACP result has
        been written to the agent, and says exactly what was written.
        """
        pending_id, rejected, answer_ref = _read_respond(payload)
        pending = self._pending.get(pending_id)
        if pending is None:
            raise ActionError(ErrorCode.NOT_FOUND, "no open elicitation has that pending_id")
        if isinstance(pending.form, UrlRequest):
            # Consent or not; whatever answers came with it are ignored, and nothing else is sent.
            result = decline_response() if rejected else {"action": "accept"}
            outcome: Outcome = "declined" if rejected else "accepted"
            self._settle(
                pending,
                result,
                outcome,
                "operator_skipped" if rejected else "operator",
                agent_first=True,
                answer_ref=answer_ref,
            )
            await pending.delivered.wait()
            return {"success": True, **result}
        if rejected:
            # Skip: the answers, whatever they hold, are ignored (docs/decisions/answers.md#f10-answer-validation).
            result = decline_response()
            self._settle(pending, result, "declined", "operator_skipped", agent_first=True, answer_ref=answer_ref)
        else:
            answers = payload.get("answers")
            problems = validate_answers(pending.form, answers)
            if problems:
                raise ActionError(
                    ErrorCode.VALIDATION_ERROR,
                    "the answers do not fit the elicitation's questions",
                    {"problems": [problem.to_wire() for problem in problems]},
                )
            result = build_response(pending.form, normalise(pending.form, answers), rejected=False)
            self._settle(pending, result, "accepted", "operator", agent_first=True, answer_ref=answer_ref)
        await pending.delivered.wait()
        return {"success": True, **reported_response(pending.form, result)}

    def cancel_session(self, session_id: str) -> None:
        """``agent.cancel`` ended the session's turn: settle its elicitations (AC-15)."""
        for pending in [p for p in self._pending.values() if p.session_id == session_id]:
            self._settle(pending, cancel_response(), "cancelled", "turn_cancelled")

    def cancel_all(self, reason: EndReason) -> None:
        """The agent exited or agentctl is shutting down: settle everything."""
        for pending in list(self._pending.values()):
            self._settle(pending, cancel_response(), "cancelled", reason)

    # Internals ------------------------------------------------------------

    def _park_url(self, params: Any, request_id: JsonRpcId) -> _Pending | None:
        """Announce a URL request, or decline it at once: malformed, not this agent's, or an address not shown."""
        request = read_url_request(params)
        if isinstance(request, Decline):
            logger.info("elicitation/create (url) declined: %s", request.reason.value)
            return None
        if request.session_id not in self.sessions:
            logger.info("elicitation/create (url) declined: unknown_session")
            return None
        problem = request.problem(allow_http_loopback=self.allow_http_loopback)
        if problem is not None:
            # The code only: the address may carry a token, and the operator needs the why, not the what.
            logger.info("elicitation/create (url) declined: url_refused (%s)", problem.value)
            self.emit(
                "elicitation.declined",
                {"session_id": request.session_id, "reason": "url_refused", "problem": problem.value},
            )
            return None
        pending_id = str(uuid.uuid4())
        created_at = datetime.now(UTC)
        announcement: Payload = {
            "pending_id": pending_id,
            "session_id": request.session_id,
            "tool_call_id": None,
            "message": request.message,
            **request.wire(),
            "created_at": _rfc3339(created_at),
            "expires_at": _rfc3339(created_at + self.answer_timeout),
            "questions": [],
        }
        pending = self._hold(pending_id, request, request_id, announcement)
        logger.info("elicitation %s pending in session %s: a URL to open", pending_id, request.session_id)
        self.emit("elicitation.requested", announcement)
        return pending

    def _hold(
        self, pending_id: str, form: MappedForm | UrlRequest, request_id: JsonRpcId, announcement: Payload
    ) -> _Pending:
        """Keep a request open until it is settled, at the latest when the answer timeout fires."""
        pending = _Pending(id=pending_id, form=form, request_id=request_id, announcement=announcement)
        pending.timer = asyncio.get_running_loop().call_later(
            self.answer_timeout.total_seconds(), self._settle, pending, decline_response(), "declined", "answer_timeout"
        )
        self._pending[pending_id] = pending
        return pending

    def _park(self, params: Any, request_id: JsonRpcId) -> _Pending | None:
        """Map and announce the request; None when it is to be declined at once."""
        if not self.enabled:
            logger.info("elicitation/create declined: form elicitation is off for this execution")
            session_id = params.get("sessionId") if isinstance(params, dict) else None
            if isinstance(session_id, str) and session_id in self.sessions:
                self.emit("elicitation.declined", {"session_id": session_id, "reason": "elicitation_off"})
            return None
        try:
            form = map_elicitation(params)
        except Exception:  # fail closed: a body the mapping chokes on is a malformed one
            logger.exception("elicitation/create declined: the request could not be mapped")
            return None
        if isinstance(form, Decline):
            logger.info("elicitation/create declined: %s", form.reason.value)
            return None
        if form.session_id not in self.sessions:
            logger.info("elicitation/create declined: unknown_session")
            return None

        pending_id = str(uuid.uuid4())
        created_at = datetime.now(UTC)
        announcement: Payload = {
            "pending_id": pending_id,
            "session_id": form.session_id,
            "tool_call_id": form.tool_call_id,
            "message": form.message,
            **form.wire_heading(),
            "created_at": _rfc3339(created_at),
            "expires_at": _rfc3339(created_at + self.answer_timeout),
            "questions": form.wire_questions(),
        }
        if form.delivery is not None:
            # Absent for a form the agent waits for, so such a form is announced as before.
            announcement["delivery"] = form.delivery
        size = len(json.dumps(announcement, ensure_ascii=False, separators=(",", ":")).encode())
        if size > MAX_ANNOUNCEMENT_BYTES:
            logger.info("elicitation/create declined: too_large (a %d-byte announcement)", size)
            return None
        pending = self._hold(pending_id, form, request_id, announcement)
        logger.info(
            "elicitation %s pending in session %s: %d question(s)", pending_id, form.session_id, len(form.questions)
        )
        self.emit("elicitation.requested", announcement)
        return pending

    def _settle(
        self,
        pending: _Pending,
        result: dict[str, Any],
        outcome: Outcome,
        reason: Reason,
        *,
        agent_first: bool = False,
        answer_ref: str | None = None,
    ) -> None:
        """Settle ``pending`` with ``result`` for the agent, and announce it.

        ``agent_first`` (an operator's answer): the announcement waits for the
        agent to be written its answer, which ``create`` does on the loop's
        next turn, so the agent is not kept waiting on it. It still goes out
        before ``respond`` answers, and before anything the agent says next
        can be read. ``answer_ref`` is the winning answer's, echoed so that the
        client that settles its record knows which of its answers won.
        """
        # Popping first makes the first settlement the only one.
        if self._pending.pop(pending.id, None) is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.answer.done():
            pending.answer.set_result(result)
        if isinstance(pending.form, UrlRequest) and outcome == "accepted":
            self._await_completion(pending.form.elicitation_id, pending)
        if agent_first:
            asyncio.get_running_loop().call_soon(self._announce_settled, pending, result, outcome, reason, answer_ref)
        else:
            self._announce_settled(pending, result, outcome, reason, answer_ref)

    def _announce_settled(
        self, pending: _Pending, result: dict[str, Any], outcome: Outcome, reason: Reason, answer_ref: str | None
    ) -> None:
        settled: Payload = {
            "pending_id": pending.id,
            "session_id": pending.session_id,
            "outcome": outcome,
            "reason": reason,
        }
        if answer_ref is not None:
            settled["answer_ref"] = answer_ref
        if outcome == "accepted" and isinstance(pending.form, UrlRequest):
            settled["content"] = {}
        elif outcome == "accepted" and isinstance(pending.form, MappedForm):
            reported = reported_response(pending.form, result)
            settled["content"] = reported.get("content", {})
            if "withheld" in reported:
                settled["withheld"] = reported["withheld"]
        logger.info("elicitation %s settled: %s (%s)", pending.id, outcome, reason)
        self.emit("elicitation.settled", settled)

    def _await_completion(self, elicitation_id: str, pending: _Pending) -> None:
        """Remember an accepted URL request for its ``elicitation/complete``, forgetting the oldest past the bound."""
        self._awaiting_completion[elicitation_id] = (pending.id, pending.session_id)
        self._awaiting_completion.move_to_end(elicitation_id)
        while len(self._awaiting_completion) > MAX_AWAITING_COMPLETION:
            self._awaiting_completion.popitem(last=False)


def _read_respond(payload: Payload) -> tuple[str, bool, str | None]:
    """``pending_id``, ``rejected`` and ``answer_ref`` of a respond payload, or ``VALIDATION_ERROR``.

    Problems have the shape of the answers' own (``Problem.to_wire``), so that
    ``details.problems`` reads the same whatever was wrong.
    """
    pending_id = payload.get("pending_id")
    rejected = payload.get("rejected", False)
    reject_reason = payload.get("reject_reason")
    answer_ref = payload.get("answer_ref")
    codes = []
    if not isinstance(pending_id, str) or not pending_id:
        codes.append("bad_pending_id")
    if not isinstance(rejected, bool):
        codes.append("bad_rejected")
    if reject_reason is not None and not isinstance(reject_reason, str):
        codes.append("bad_reject_reason")
    if answer_ref is not None and not (isinstance(answer_ref, str) and 0 < len(answer_ref) <= MAX_ANSWER_REF_CHARS):
        codes.append("bad_answer_ref")
    if codes or not isinstance(pending_id, str):  # the isinstance is for the type checker
        problems = [{"code": code, "index": None, "question_id": None, "option_id": None} for code in codes]
        raise ActionError(ErrorCode.VALIDATION_ERROR, ", ".join(codes), {"problems": problems})
    return pending_id, rejected is True, answer_ref


def _rfc3339(moment: datetime) -> str:
    """As the envelope's timestamps: UTC, milliseconds, ``Z``."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
