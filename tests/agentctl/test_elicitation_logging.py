"""agentctl's log never holds question text, answers or the stream token (docs/decisions/operator.md#secrets)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from pathlib import Path

import pytest

from kandev_web.agentctl.cli import TOKEN_VAR
from kandev_web.agentctl.launcher import agentctl_command
from kandev_web.agentctl.stream_client import AgentStreamClient, ValidationFailed
from testing_support.agentctl import Inbox, open_session, text_prompt
from testing_support.scripted_elicitation import SESSION, answered, companion, elicit, form, in_a_turn, single

pytestmark = pytest.mark.asyncio

SECRETS = {
    "message": "Tell me the vault combination",
    "description": "Which launch code unlocks hangar nine?",
    "title": "Hangar nine launch code",
    "option": "Zebra-Tango-42",
    "option_title": "The zebra tango code",
    "typed": "correct-horse-battery-staple",
    "api_key": "sk-live-0123456789abcdef",
}
FORMS = [
    form(
        {
            "code": single(
                [{"const": SECRETS["option"], "title": SECRETS["option_title"]}, {"const": "other", "title": "Other"}],
                title=SECRETS["title"],
                description=SECRETS["description"],
            ),
            "code_custom": companion("code"),
        },
        message=SECRETS["message"],
    ),
    form({"apiKey": {"type": "string"}}, message=SECRETS["message"], tool_call_id=None),
]


async def _start_with_log(agent_argv: list[str], log: Path, token: str, level: str) -> asyncio.subprocess.Process:
    env = {**os.environ, TOKEN_VAR: token, "KANDEV_AGENTCTL_LOG_LEVEL": level}
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *agentctl_command(), "--", *agent_argv, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env
        )
    assert process.stdout
    return process


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_no_question_text_answer_or_token_reaches_the_log(scripted, tmp_path: Path, level: str) -> None:
    steps = in_a_turn({"send": elicit(0, FORMS[0])}, {"send": elicit(1, FORMS[1])}, *answered(0, 1))
    token = secrets.token_urlsafe(32)
    log = tmp_path / "agentctl.log"
    process = await _start_with_log(scripted.argv(steps), log, token, level)
    try:
        assert process.stdout
        ready = json.loads(await asyncio.wait_for(process.stdout.readline(), 10))
        inbox = Inbox()
        async with AgentStreamClient(ready["url"], token, on_notification=inbox) as client:
            session_id = await open_session(client, elicitation=True)
            assert session_id == SESSION
            await client.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt("ask")})
            code, key = await inbox.next("elicitation.requested"), await inbox.next("elicitation.requested")
            two_options = [{"question_id": "code", "selected_options": [SECRETS["option"], "other"]}]
            with pytest.raises(ValidationFailed):  # a refused answer is not logged either
                await client.request(
                    "agent.elicitations.respond", {"pending_id": code["pending_id"], "answers": two_options}
                )
            typed = [{"question_id": "code", "selected_options": [SECRETS["option"]], "custom_text": SECRETS["typed"]}]
            answers = [(code, typed), (key, [{"question_id": "apiKey", "custom_text": SECRETS["api_key"]}])]
            for requested, given in answers:
                await client.request(
                    "agent.elicitations.respond",
                    {"pending_id": requested["pending_id"], "answers": given, "rejected": False, "reject_reason": ""},
                )
            await inbox.next("turn.completed")
            await client.request("agent.shutdown")
        assert await asyncio.wait_for(process.wait(), 10) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    text = log.read_text()
    assert "pending in session" in text  # the log does say what happened
    for name, secret in [*SECRETS.items(), ("token", token)]:
        assert secret not in text, f"the {name} is in agentctl's log"
