"""How MCP servers reach an agent: as given when it speaks HTTP MCP, through kandev-mcp-stdio otherwise.

``e2e/test_mcp_stdio.py`` runs the proxy for real, between the mock agent and the web app.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl import mcp_transport

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)

KANDEV = {
    "type": "http",
    "name": "kandev",
    "url": "http://web/mcp/",
    "headers": [{"name": "Authorization", "value": "Bearer t"}],
}
DOCS = {"name": "docs", "command": "/usr/bin/docs-mcp", "args": [], "env": []}


def test_http_servers_go_through_stdio_for_an_agent_without_http() -> None:
    servers = mcp_transport.servers_for_agent([KANDEV, DOCS], http=False, command=["/venv/bin/kandev-mcp-stdio"])
    assert servers == [
        {
            "name": "kandev",
            "command": "/venv/bin/kandev-mcp-stdio",
            "args": [],
            "env": [
                {"name": "KANDEV_MCP_URL", "value": "http://web/mcp/"},
                {"name": "KANDEV_MCP_HEADERS", "value": '[{"name": "Authorization", "value": "Bearer t"}]'},
            ],
        },
        DOCS,
    ]
    assert mcp_transport.transports(servers) == {"kandev": "stdio", "docs": "stdio"}


def test_an_agent_that_speaks_http_gets_the_servers_as_given() -> None:
    assert mcp_transport.servers_for_agent([KANDEV, DOCS], http=True, command=["x"]) == [KANDEV, DOCS]


@given(json_values)
def test_only_a_literal_true_http_capability_counts(capabilities) -> None:
    expected = (
        isinstance(capabilities, dict)
        and isinstance(capabilities.get("mcpCapabilities"), dict)
        and capabilities["mcpCapabilities"].get("http") is True
    )
    assert mcp_transport.speaks_http(capabilities) is expected
