"""An MCP server's sign-in page (URL-mode elicitation), forwarded by the real Claude bridge 0.101.0.

The session is given a stdio MCP server (``forms_mcp_server.py --url``); the
fake Messages API has the model call its ``sign_in`` tool; the server asks its
client (the CLI) to open a page, and the bridge forwards that as ACP
``elicitation/create`` in mode ``url`` when agentctl advertised ``url``. After
the operator's consent the server says the sign-in finished; the bridge
forwards that as ``elicitation/complete``, which agentctl announces as
``elicitation.completed``. With ``form`` alone advertised the server gets
``cancel`` and nobody is asked. Bridge 0.65.0's CLI refuses URL mode itself,
so only 0.101.0 is run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing_support.agentctl import text_prompt
from testing_support.bridge import find_bridge
from testing_support.bridge.forms import MCP_URL_TOOL, fake_api, forms_server, prompt, received_by_the_mcp_server
from testing_support.bridge.forms_mcp_server import SIGN_IN_ID, SIGN_IN_MESSAGE, SIGN_IN_URL
from testing_support.bridge.harness import BridgeRun, bridge_session, open_session

VERSION = "0.101.0"


async def granted_until(run: BridgeRun, *actions: str) -> tuple[str, dict]:
    """The first of ``actions``; a permission to run the MCP tool, if the CLI asks one, is granted on the way."""
    while True:
        action, payload = await run.first_of("permission.requested", *actions)
        if action != "permission.requested":
            return action, payload
        allow = next(o for o in payload["options"] if o.get("kind", "").startswith("allow"))
        await run.request(
            "agent.permissions.respond", {"pending_id": payload["pending_id"], "option_id": allow["optionId"]}
        )


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_consent_reaches_the_mcp_server_and_its_completion_is_announced(tmp_path: Path) -> None:
    api = fake_api(url=True)
    async with bridge_session(find_bridge(VERSION), tmp_path, api) as run:
        session_id = await open_session(run, elicitation=True, url=True, mcp_servers=[forms_server(url=True)])
        await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(prompt(url=True))})

        action, requested = await granted_until(run, "elicitation.requested", "turn.completed")
        assert action == "elicitation.requested", run.explain()
        assert MCP_URL_TOOL in api.of_kind("ask")[0].tool_names
        assert (requested["mode"], requested["url"], requested["message"]) == ("url", SIGN_IN_URL, SIGN_IN_MESSAGE)
        assert requested["elicitation_id"] == SIGN_IN_ID
        assert requested["questions"] == []
        assert requested["tool_call_id"] is None

        respond = {"pending_id": requested["pending_id"], "answers": [], "rejected": False, "reject_reason": ""}
        assert await run.request("agent.elicitations.respond", respond) == {"success": True, "action": "accept"}
        completed = await run.next("elicitation.completed")
        assert completed == {
            "pending_id": requested["pending_id"],
            "elicitation_id": SIGN_IN_ID,
            "session_id": session_id,
        }
        turn = await run.next("turn.completed")
        assert turn["stop_reason"] == "end_turn", run.explain()
        assert received_by_the_mcp_server(api) == {"action": "accept", "content": {}}
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_with_form_alone_the_mcp_server_gets_cancel_and_nobody_is_asked(tmp_path: Path) -> None:
    api = fake_api(url=True)
    async with bridge_session(find_bridge(VERSION), tmp_path, api) as run:
        session_id = await open_session(run, elicitation=True, mcp_servers=[forms_server(url=True)])
        await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(prompt(url=True))})

        action, turn = await granted_until(run, "elicitation.requested", "turn.completed")
        assert action == "turn.completed", run.explain()
        assert turn["stop_reason"] == "end_turn", run.explain()
        assert received_by_the_mcp_server(api)["action"] == "cancel"
        assert run.inbox.all("elicitation.requested") == []
        assert run.inbox.all("elicitation.completed") == []
    assert run.leftovers == []
