"""Per-session bearer tokens for the MCP endpoint.

Only a hash is stored: a database dump must not let anyone answer for an agent.
"""

import hashlib
import secrets

#: Where the web app serves MCP to agents (see ``kandev_web.clarifications.mcp``).
MCP_PATH = "/mcp/"
MCP_SERVER_NAME = "kandev"


def new_token() -> tuple[str, str]:
    """A fresh token and the hash to store for it."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def session_for_token(token: str):
    from .models import SessionState, TaskSession

    if not token:
        return None
    return (
        TaskSession.objects.select_related("task__board")
        .exclude(state__in=[SessionState.COMPLETED, SessionState.CANCELLED, SessionState.FAILED])
        .filter(mcp_token_hash=token_hash(token))
        .first()
    )


def mcp_server_for_agent(url: str, token: str) -> dict:
    """The ACP ``McpServer`` entry handed to the agent in ``session/new``."""
    return {
        "type": "http",
        "name": MCP_SERVER_NAME,
        "url": url,
        "headers": [{"name": "Authorization", "value": f"Bearer {token}"}],
    }
