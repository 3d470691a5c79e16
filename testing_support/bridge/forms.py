"""An MCP server's typed form, forwarded by the real Claude bridge: the server, the model's script, what came back.

The session is given a stdio MCP server (``forms_mcp_server.py``, beside this
module); the fake Messages API has the model call its ``deploy_settings``
tool; the server asks a typed form through MCP elicitation, which the bridge
forwards as ACP ``elicitation/create``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .fake_messages_api import FakeMessagesApi, tool_result_text
from .forms_mcp_server import RECEIVED, SERVER_NAME, TOOL_NAME, URL_TOOL_NAME

MARKER = "KANDEV-MCP-FORMS-PROBE"
FORMS_SERVER = Path(__file__).with_name("forms_mcp_server.py")
#: The CLI's name for the MCP server's tool.
MCP_TOOL = f"mcp__{SERVER_NAME}__{TOOL_NAME}"
#: The same, for the server started with ``--url`` (a sign-in page to open).
MCP_URL_TOOL = f"mcp__{SERVER_NAME}__{URL_TOOL_NAME}"
FINAL_TEXT = "Deploying with your settings."


def forms_server(*, url: bool = False) -> dict[str, Any]:
    """The ACP ``McpServer`` (stdio) that ``session/new`` gives the agent; ``url``: the sign-in server."""
    args = [str(FORMS_SERVER), *(["--url"] if url else [])]
    return {"name": SERVER_NAME, "command": sys.executable, "args": args, "env": []}


def fake_api(*, url: bool = False) -> FakeMessagesApi:
    return FakeMessagesApi(
        marker=MARKER,
        questions=[],
        final_text=FINAL_TEXT,
        no_tool_text="No forms tool here.",
        tool=MCP_URL_TOOL if url else MCP_TOOL,
    )


def prompt(*, url: bool = False) -> str:
    if url:
        return f"{MARKER}: call the {URL_TOOL_NAME} tool to sign me in to keysrv."
    return f"{MARKER}: call the {TOOL_NAME} tool to ask me for the deployment settings."


def received_by_the_mcp_server(api: FakeMessagesApi) -> dict[str, Any]:
    """What the MCP server's tool reported it received, from the tool result the model got."""
    (ask,) = api.of_kind("ask")
    (follow_up,) = api.of_kind("after_tool_result")
    (block,) = [b for b in follow_up.tool_results() if b.get("tool_use_id") == ask.tool_use_id]
    text = tool_result_text(block)
    assert RECEIVED in text, text
    value, _ = json.JSONDecoder().raw_decode(text[text.index(RECEIVED) + len(RECEIVED) :].lstrip())
    return value
