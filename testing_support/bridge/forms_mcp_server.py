"""An MCP server (stdio) whose one tool asks a typed form through MCP elicitation.

Started by the Claude CLI inside the real bridge, as an MCP server named in
``session/new``. When the model calls ``deploy_settings`` it sends
``elicitation/create`` to its client (the CLI), which the bridge forwards to
agentctl as an ACP form elicitation. The tool's result is what the server
received, as JSON, and whether it is valid for the schema it asked with, so
the test reads the typed content exactly as the MCP server got it:

    RECEIVED {"action": "accept", "content": {...}, "valid": true}

With ``--url`` its one tool is ``sign_in`` instead, which asks the client to
open a page (MCP's URL-mode elicitation, an OAuth sign-in as a real server
would ask for it) and, once the client consented, says the sign-in finished
with ``notifications/elicitation/complete`` before it returns what it received.

Newline-delimited JSON-RPC on stdin/stdout with the standard library only (and
``jsonschema`` to judge what came back): the CLI connects MCP servers in the
background, and the SDK's import time on a busy machine would outlast its wait.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SERVER_NAME = "forms"
TOOL_NAME = "deploy_settings"
MESSAGE = "A few settings before I deploy."
#: A boolean, an integer with a range, an e-mail and a required field.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "overwrite": {"type": "boolean", "title": "Overwrite", "description": "Overwrite the existing file?"},
        "replicas": {
            "type": "integer",
            "title": "Replicas",
            "description": "How many replicas?",
            "minimum": 1,
            "maximum": 5,
        },
        "contact": {"type": "string", "title": "Contact", "description": "Who is paged?", "format": "email"},
    },
    "required": ["contact"],
}
RECEIVED = "RECEIVED"
ELICITATION_ID = "forms-elicit-1"
#: ``--url``: the tool, and the page it asks the client to open (never opened by anyone in a test).
URL_TOOL_NAME = "sign_in"
SIGN_IN_URL = "https://auth.example.test/authorize?x=1"
SIGN_IN_MESSAGE = "Please authorize keysrv in your browser."
SIGN_IN_ID = "keysrv-sign-in-1"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def valid(content: object) -> bool:
    import jsonschema  # only once an answer is in: the server starts at once

    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(SCHEMA, format_checker=checker).is_valid(content)


def main() -> None:
    url_mode = "--url" in sys.argv[1:]
    calls: dict[str, Any] = {}  # elicitation request id -> the tools/call request id it answers
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": SERVER_NAME, "version": "1"},
                    },
                }
            )
        elif method == "tools/list":
            tool = {
                "name": URL_TOOL_NAME if url_mode else TOOL_NAME,
                "description": "Sign the user in to keysrv."
                if url_mode
                else "Ask the user for the deployment settings.",
                "inputSchema": {"type": "object", "properties": {}},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [tool]}})
        elif method == "tools/call":
            elicit_id = f"{ELICITATION_ID}-{len(calls)}"
            calls[elicit_id] = request_id
            params: dict[str, Any] = {"mode": "form", "message": MESSAGE, "requestedSchema": SCHEMA}
            if url_mode:
                params = {"mode": "url", "message": SIGN_IN_MESSAGE, "url": SIGN_IN_URL, "elicitationId": SIGN_IN_ID}
            send({"jsonrpc": "2.0", "id": elicit_id, "method": "elicitation/create", "params": params})
        elif method is None and request_id in calls:
            result = message.get("result") or {}
            content = result.get("content") if result.get("action") == "accept" else None
            if url_mode:
                report: dict[str, Any] = {"action": result.get("action"), "content": content}
                if result.get("action") == "accept":
                    # The page did its work (a real server: its OAuth callback came in).
                    complete = {"elicitationId": SIGN_IN_ID}
                    send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": complete})
            else:
                report = {
                    "action": result.get("action"),
                    "content": content,
                    "valid": content is not None and valid(content),
                }
            text = RECEIVED + " " + json.dumps(report)
            send(
                {"jsonrpc": "2.0", "id": calls.pop(request_id), "result": {"content": [{"type": "text", "text": text}]}}
            )
        elif request_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
