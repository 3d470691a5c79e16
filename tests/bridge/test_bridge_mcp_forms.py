"""An MCP server's typed form, forwarded by the real Claude bridge, under a real agentctl.

The session is given a stdio MCP server (``testing_support/bridge/forms_mcp_server.py``); the fake
Messages API has the model call its ``deploy_settings`` tool; the server asks
a form with a boolean, an integer from 1 to 5, an e-mail and a required field
through MCP elicitation; the bridge forwards it as ACP ``elicitation/create``.
agentctl announces typed questions, refuses an answer out of range, and the
answer it accepts reaches the MCP server as typed JSON, valid for its schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kandev_web.agentctl.stream_client import ValidationFailed
from testing_support.agentctl import text_prompt
from testing_support.bridge import Bridge
from testing_support.bridge.forms import MCP_TOOL, fake_api, forms_server, prompt, received_by_the_mcp_server
from testing_support.bridge.harness import BridgeRun, bridge_session, open_session


async def next_elicitation(run: BridgeRun) -> dict[str, Any]:
    """The forwarded form; a permission to run the MCP tool, if the CLI asks one, is granted first."""
    action, payload = await run.first_of("permission.requested", "elicitation.requested", "turn.completed")
    if action == "permission.requested":
        allow = next(o for o in payload["options"] if o.get("kind", "").startswith("allow"))
        await run.request(
            "agent.permissions.respond", {"pending_id": payload["pending_id"], "option_id": allow["optionId"]}
        )
        action, payload = await run.first_of("elicitation.requested", "turn.completed")
    offered = [e.tool_names for e in run.api.of_kind("no_tool", "ask", "wait")]
    assert action == "elicitation.requested", f"the form never reached agentctl\n{run.explain()}\ntools: {offered}"
    return payload


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_an_mcp_servers_typed_form_gets_typed_content_back(bridge: Bridge, tmp_path: Path) -> None:
    api = fake_api()
    async with bridge_session(bridge, tmp_path, api) as run:
        session_id = await open_session(run, elicitation=True, mcp_servers=[forms_server()])
        await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(prompt())})

        requested = await next_elicitation(run)
        assert MCP_TOOL in api.of_kind("ask")[0].tool_names
        questions = {q["id"]: q for q in requested["questions"]}
        assert sorted(questions) == ["contact", "overwrite", "replicas"]
        assert (questions["overwrite"]["kind"], questions["overwrite"].get("required")) == ("boolean", None)
        assert questions["replicas"]["kind"] == "integer"
        assert questions["replicas"]["constraints"] == {"minimum": 1, "maximum": 5}
        assert questions["contact"]["constraints"] == {"format": "email"}
        assert questions["contact"]["required"] is True

        respond = {"pending_id": requested["pending_id"], "rejected": False, "reject_reason": ""}
        with pytest.raises(ValidationFailed) as refused:
            await run.request(
                "agent.elicitations.respond", {**respond, "answers": [{"question_id": "replicas", "value": 9}]}
            )
        assert [p["code"] for p in refused.value.details["problems"]] == ["required_unanswered", "above_maximum"]

        answers = [
            {"question_id": "overwrite", "value": True},
            {"question_id": "replicas", "value": 3},
            {"question_id": "contact", "custom_text": "ops@example.com"},
        ]
        answered = await run.request("agent.elicitations.respond", {**respond, "answers": answers})
        assert answered["content"] == {"contact": "ops@example.com", "overwrite": True, "replicas": 3}
        completed = await run.next("turn.completed")
        assert completed["stop_reason"] == "end_turn", run.explain()

        assert received_by_the_mcp_server(api) == {
            "action": "accept",
            "content": {"contact": "ops@example.com", "overwrite": True, "replicas": 3},
            "valid": True,
        }
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"
