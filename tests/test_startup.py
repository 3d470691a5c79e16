"""What a web process imports to start: every start pays for it, each test server's too."""

import subprocess
import sys
import textwrap

import pytest

from testing_support.processes import ROOT, server_environ

PROBE = textwrap.dedent(
    """
    import asyncio, sys
    from kandev_web.asgi import http_app
    from kandev_web.sessions.mcp_tokens import MCP_PATH

    print("mcp" in sys.modules, "pywebpush" in sys.modules)
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": MCP_PATH, "headers": [], "query_string": b""}
    asyncio.run(http_app(scope, receive, send))
    print(sent[0]["status"], "mcp" in sys.modules)
    """
)


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> list[str]:
    """What ``PROBE`` prints in a process of its own (one for both tests): the libraries it started with,
    then the MCP request's outcome."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=server_environ(tmp_path_factory.mktemp("startup") / "db.sqlite3"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_a_web_process_starts_without_the_mcp_sdk_which_the_first_mcp_request_imports(printed):
    """The SDK takes most of a second of CPU to import: only a process whose agents call it pays that."""
    assert printed[0] == "False"
    assert printed[2:] == ["401", "True"]


def test_a_web_process_starts_without_pywebpush_which_the_first_push_imports(printed):
    """pywebpush brings aiohttp and requests: a tenth of a second of every start, each manage.py command's too.

    That the first push imports it, and is sent, is tests/notifications/test_web_push.py's.
    """
    assert printed[1] == "False"
