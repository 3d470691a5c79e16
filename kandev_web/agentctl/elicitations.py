"""The seam where the agent's ``elicitation/create`` requests are answered.

This is the behaviour Kandev had before form elicitation existed: every
request is declined at once and the operator never sees it. The next issue
(ACP form elicitation) replaces this class and nothing else; the controller
already calls every method below at the moment the contract says a pending
elicitation must be settled, so a replacement only has to fill them in.
"""

from __future__ import annotations

from collections.abc import Set
from datetime import timedelta
from typing import Any, Literal

from kandev_web.agentctl.envelope import ActionError, Emit, ErrorCode, Payload
from kandev_web.agentctl.jsonrpc import JsonRpcId

#: Why every pending elicitation of the process is being settled at once.
EndReason = Literal["agent_exited", "agentctl_shutdown"]


class ElicitationHandler:
    """Declines every elicitation; holds none pending.

    The constructor takes what a real handler needs, so replacing the class
    does not touch its caller: the announcement channel, whether the web app
    turned ``features.acpElicitation`` on for this execution, how long an
    operator may take to answer, and the ids of this agent's sessions (a live
    set; a request for any other session is declined).
    """

    def __init__(self, emit: Emit, *, enabled: bool, answer_timeout: timedelta, sessions: Set[str]) -> None:
        self.emit = emit
        self.enabled = enabled
        self.answer_timeout = answer_timeout
        self.sessions = sessions

    async def create(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        """Answer an ``elicitation/create`` request from the agent.

        The JSON-RPC layer writes the returned result to the agent right after
        this returns, with no await in between.
        """
        return {"action": "decline"}

    def list(self) -> list[Payload]:
        """The open elicitations, as their ``elicitation.requested`` payloads."""
        return []

    async def respond(self, payload: Payload) -> Payload:
        """Handle ``agent.elicitations.respond``; nothing is ever pending here."""
        raise ActionError(ErrorCode.NOT_FOUND, "no open elicitation has that pending_id")

    def cancel_session(self, session_id: str) -> None:
        """``agent.cancel`` ended the session's turn: settle its elicitations."""

    def cancel_request(self, request_id: JsonRpcId) -> bool:
        """The agent withdrew a request with ``$/cancel_request``; True if it was ours."""
        return False

    def cancel_all(self, reason: EndReason) -> None:
        """The agent exited or agentctl is shutting down: settle everything."""
