"""Driving form elicitations through a real agentctl and a scripted ACP agent.

The scripted agent (scripted_agent.py) sends ``elicitation/create`` frames on
cue, waits for agentctl's answer to each and reports it back as a message
chunk (its ``echo`` step), so a test reads exactly what the agent received.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from kandev_web.agentctl.launcher import AgentctlProcess
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox, open_session, text_prompt

SESSION = "sess-1"

#: A well-formed one-question form, as the Claude bridge sends it (minus the companion).
COLOUR_FORM = {
    "mode": "form",
    "sessionId": SESSION,
    "toolCallId": "toolu_1",
    "message": "Pick a colour",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "question_0": {
                "type": "string",
                "title": "Colour",
                "oneOf": [{"const": "Red", "title": "Red"}, {"const": "Blue", "title": "Blue"}],
            }
        },
    },
}

COLOURS = [
    {"const": "Red", "title": "Red", "description": "The warm one."},
    {"const": "Blue", "title": "Blue", "description": "The cool one."},
    {"const": "Green", "title": "Green"},
]
ENVS = [{"const": "dev", "title": "dev"}, {"const": "staging", "title": "staging"}, {"const": "prod", "title": "prod"}]


def companion(question_id: str, **fields: Any) -> dict[str, Any]:
    """A custom-answer companion carrying the bridge's marker."""
    return {
        "type": "string",
        "title": "Other",
        "description": "Type your own answer instead of choosing an option above (optional).",
        "_meta": {"_askUserQuestionCustomAnswer": {"questionId": question_id, "isCustomAnswer": True}},
        **fields,
    }


def single(options: list[dict[str, Any]] = COLOURS, **fields: Any) -> dict[str, Any]:
    return {"type": "string", "oneOf": options, **fields}


def multi(options: list[dict[str, Any]] = ENVS, **fields: Any) -> dict[str, Any]:
    return {"type": "array", "items": {"anyOf": options}, **fields}


def form(
    properties: dict[str, Any],
    *,
    message: str = "Pick a colour",
    session_id: str = SESSION,
    tool_call_id: str | None = "toolu_1",
    **extra: Any,
) -> dict[str, Any]:
    """``elicitation/create`` params, the form + session-scoped variant unless ``extra`` says otherwise."""
    params: dict[str, Any] = {"mode": "form", "sessionId": session_id}
    if tool_call_id is not None:
        params["toolCallId"] = tool_call_id
    params["message"] = message
    params["requestedSchema"] = {"type": "object", "properties": properties}
    return {**params, **extra}


#: One single-select question with three options and its companion (AC-04).
COLOUR_FORM = form({"question_0": single(title="Colour"), "question_0_custom": companion("question_0")})


def elicit(request_id: int | str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": params}


def answered(*request_ids: int | str) -> list[dict[str, Any]]:
    """Script steps: wait for agentctl's answer to each request in turn and report it."""
    return [step for rid in request_ids for step in ({"expect_response": rid}, {"echo": SESSION})]


def in_a_turn(*steps: dict[str, Any], stop: str = "end_turn") -> list[dict[str, Any]]:
    """Script steps played between ``session/prompt`` and its answer."""
    return [{"expect": "session/prompt"}, *steps, {"reply": {"stopReason": stop}}]


def ask(params: Any, request_id: int | str = 0, *, stop: str = "end_turn") -> list[dict[str, Any]]:
    """A turn that sends one elicitation and ends once agentctl has answered it."""
    return in_a_turn({"send": elicit(request_id, params)}, *answered(request_id), stop=stop)


@dataclass
class Run:
    """A scripted agent behind a real agentctl, one session, one open turn."""

    agentctl: AgentctlProcess
    client: AgentStreamClient
    inbox: Inbox
    session_id: str
    turn_id: str

    async def requested(self, timeout: float = 5.0) -> dict[str, Any]:
        return await self.inbox.next("elicitation.requested", timeout=timeout)

    async def settled(self, pending_id: str | None = None, timeout: float = 5.0) -> dict[str, Any]:
        where = None if pending_id is None else (lambda note: note["pending_id"] == pending_id)
        return await self.inbox.next("elicitation.settled", where, timeout=timeout)

    async def respond(
        self, pending_id: str, answers: list[dict[str, Any]] | None = None, *, rejected: bool = False
    ) -> dict[str, Any]:
        payload = {"pending_id": pending_id, "answers": answers or [], "rejected": rejected, "reject_reason": ""}
        return await self.client.request("agent.elicitations.respond", payload)

    async def finished(self) -> dict[str, Any]:
        """The turn's ``turn.completed``."""
        return await self.inbox.next("turn.completed")

    def echoed(self) -> list[dict[str, Any]]:
        """The frames the agent reported with ``echo``, in order: agentctl's answers."""
        return [
            json.loads(note["update"]["content"]["text"])
            for note in self.inbox.all("session.update")
            if note["update"].get("sessionUpdate") == "agent_message_chunk"
        ]

    def events(self, pending_id: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The ``elicitation.*`` notifications so far, optionally of one pending."""
        return [
            (action, payload)
            for action, payload in self.inbox.received
            if action.startswith("elicitation.") and (pending_id is None or payload["pending_id"] == pending_id)
        ]


async def run_script(
    start_agentctl: Any,
    connect: Any,
    scripted: Any,
    steps: list[dict[str, Any]],
    *,
    flag: bool = True,
    env: dict[str, str] | None = None,
    url: bool | None = None,
    http_loopback: bool | None = None,
) -> Run:
    """Start agentctl for this script, open the session with the flag on (or off), send a prompt.

    ``url`` is ``features.acpUrlElicitation``; ``http_loopback`` the web app's development setting.
    """
    options = {} if env is None else {"env": {**os.environ, **env}}
    agentctl = await start_agentctl(scripted.argv(steps), **options)
    client, inbox = await connect(agentctl)
    session_id = await open_session(client, elicitation=flag, url=url, http_loopback=http_loopback)
    turn = await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("ask me")})
    return Run(agentctl, client, inbox, session_id, turn["turn_id"])


def answers_read(scripted: Any, request_id: int | str) -> list[dict[str, Any]]:
    """Every answer to ``request_id`` the agent has read (after agentctl stopped: all it ever got)."""
    return [frame for frame in scripted.received() if "method" not in frame and frame.get("id") == request_id]
