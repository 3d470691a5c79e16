"""The agent's ``session/request_permission``, parked until an operator answers.

Each request gets a uuid4 pending id, announced as ``permission.requested``.
``agent.permissions.respond`` settles it; so do ``agent.cancel`` (ACP requires
open permission requests to be answered ``cancelled`` when a turn is
cancelled), the agent withdrawing it with ``$/cancel_request``, the agent
exiting, and agentctl shutting down. Every announced pending is settled
exactly once and reported as ``permission.settled``.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from kandev_web.agentctl.envelope import ActionError, Emit, ErrorCode, Payload
from kandev_web.agentctl.jsonrpc import INVALID_PARAMS, JsonRpcError, JsonRpcId

SELECTED = "selected"
CANCELLED = "cancelled"


@dataclass
class _Pending:
    id: str
    session_id: str
    request_id: JsonRpcId
    announcement: Payload
    option_ids: tuple[str, ...]
    answer: asyncio.Future[str | None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class PermissionBroker:
    """Holds the open permission requests of one agent process."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._pending: dict[str, _Pending] = {}

    async def request(self, params: Any, request_id: JsonRpcId) -> dict[str, Any]:
        """Handle ``session/request_permission``: park it, then answer the agent."""
        pending = self._park(params, request_id)
        try:
            option_id = await pending.answer
        finally:
            # Cancelled from outside: the agent's stream is gone.
            self._settle(pending, None)
        if option_id is None:
            return {"outcome": {"outcome": CANCELLED}}
        return {"outcome": {"outcome": SELECTED, "optionId": option_id}}

    def list(self) -> list[Payload]:
        """The open requests, as their ``permission.requested`` payloads."""
        return [pending.announcement for pending in self._pending.values()]

    def respond(self, pending_id: str, option_id: str | None) -> None:
        """Settle with the operator's choice, or as cancelled when ``option_id`` is None."""
        pending = self._pending.get(pending_id)
        if pending is None:
            raise ActionError(ErrorCode.NOT_FOUND, "no open permission request has that pending_id")
        if option_id is not None and option_id not in pending.option_ids:
            raise ActionError.invalid([f"option_id {option_id!r} is not one of the options the agent offered"])
        self._settle(pending, option_id)

    def cancel_session(self, session_id: str) -> None:
        for pending in [p for p in self._pending.values() if p.session_id == session_id]:
            self._settle(pending, None)

    def cancel_request(self, request_id: JsonRpcId) -> bool:
        """Settle the request the agent withdrew with ``$/cancel_request``, if it is ours."""
        for pending in self._pending.values():
            if pending.request_id == request_id:
                self._settle(pending, None)
                return True
        return False

    def cancel_all(self) -> None:
        for pending in list(self._pending.values()):
            self._settle(pending, None)

    def _park(self, params: Any, request_id: JsonRpcId) -> _Pending:
        if not isinstance(params, dict) or not isinstance(params.get("sessionId"), str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "sessionId must be a string"})
        options = params.get("options")
        if not isinstance(options, list) or not all(
            isinstance(option, dict) and isinstance(option.get("optionId"), str) for option in options
        ):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params", {"details": "options must be a list of options"})
        pending_id = str(uuid.uuid4())
        announcement = {
            "pending_id": pending_id,
            "session_id": params["sessionId"],
            "tool_call": params.get("toolCall") or {},
            "options": options,
        }
        pending = _Pending(
            id=pending_id,
            session_id=params["sessionId"],
            request_id=request_id,
            announcement=announcement,
            option_ids=tuple(option["optionId"] for option in options),
        )
        self._pending[pending_id] = pending
        self._emit("permission.requested", announcement)
        return pending

    def _settle(self, pending: _Pending, option_id: str | None) -> None:
        # Popping first makes the first settlement the only one.
        if self._pending.pop(pending.id, None) is None:
            return
        if not pending.answer.done():
            pending.answer.set_result(option_id)
        self._emit(
            "permission.settled",
            {
                "pending_id": pending.id,
                "session_id": pending.session_id,
                "outcome": CANCELLED if option_id is None else SELECTED,
                "option_id": option_id,
            },
        )
