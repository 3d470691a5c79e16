"""A profile's own MCP servers are kept only as a well-formed list (e2e/test_typed_forms_real_bridge.py starts one)."""

import pytest
from django.core.exceptions import ValidationError

from kandev_web.agents.models import validate_mcp_servers

DOCS = {"name": "docs", "command": "/usr/bin/docs-mcp", "args": [], "env": []}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"name": "docs"}, "JSON list"),
        (["docs"], "JSON list"),
        ([{"command": "/usr/bin/docs-mcp"}], "needs a name"),
        ([{"name": "  "}], "needs a name"),
        ([DOCS, {**DOCS, "command": "/other"}], "same name"),
    ],
)
def test_a_malformed_list_is_refused_with_a_sentence(value, says):
    with pytest.raises(ValidationError) as refused:
        validate_mcp_servers(value)
    assert says in refused.value.messages[0]


def test_a_list_of_named_servers_is_kept():
    validate_mcp_servers([])
    validate_mcp_servers([DOCS, {"type": "http", "name": "search", "url": "https://mcp.example/", "headers": []}])
