"""The sentences a profile's check shows: real agents' answers, every failure, and any JSON at all."""

from __future__ import annotations

import json

from django.template import Context, Template
from django.utils.safestring import SafeData
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agents.check_report import AGENT_TEXT_CHARS, STDERR_CHARS, agent_text, report

#: The Claude bridge's initialize answer as agentctl reports it (0.101.0, trimmed).
CLAUDE = {
    "outcome": "ok",
    "host": "this machine",
    "answer": {
        "protocol_version": 1,
        "agent_info": {"name": "@agentclientprotocol/claude-agent-acp", "title": "Claude Agent", "version": "0.101.0"},
        "agent_capabilities": {
            "promptCapabilities": {"image": True, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
        },
        "auth_methods": [
            {
                "id": "claude-login",
                "name": "Log in with Claude Code",
                "type": "agent",
                "needs_person": True,
                "env_vars": [],
            },
        ],
    },
}

GEMINI = {
    "outcome": "ok",
    "host": "gpu-1",
    "answer": {
        "protocol_version": 1,
        "agent_info": {"name": "gemini-cli"},
        "agent_capabilities": {"promptCapabilities": {"image": True, "audio": True}, "mcpCapabilities": {}},
        "auth_methods": [
            {"id": "oauth-personal", "name": "Log in with Google", "needs_person": True},
            {
                "id": "gemini-api-key",
                "name": "Use Gemini API key",
                "needs_person": False,
                "env_vars": ["GEMINI_API_KEY"],
            },
        ],
    },
}


def facts(check) -> dict[str, str]:
    return {fact.key: fact.text for fact in report(check).facts}


def test_an_answer_says_name_version_protocol_mcp_prompts_and_sign_in():
    said = facts(CLAUDE)
    assert said["agent"] == "Claude Agent 0.101.0 answered on this machine."
    assert said["protocol"] == "It speaks ACP protocol version 1."
    assert said["mcp"] == "It takes MCP servers over stdio, HTTP and SSE. Kandev's MCP server reaches it over HTTP."
    assert said["prompt"] == "Its prompts also take images, embedded context."
    assert said["auth"] == (
        "It offers these sign-in methods: Log in with Claude Code (claude-login, needs a person to sign in)."
    )
    assert report(CLAUDE).ok


def test_an_agent_without_http_mcp_is_reached_over_stdio_and_its_env_method_names_its_variable():
    said = facts(GEMINI)
    assert said["agent"] == "gemini-cli answered on gpu-1; it gives no version."
    assert said["mcp"] == (
        "It takes MCP servers over stdio only, not HTTP or SSE. "
        "Kandev's MCP server reaches it over stdio, through kandev-mcp-stdio."
    )
    assert said["prompt"] == "Its prompts also take images, audio."
    assert "Use Gemini API key (gemini-api-key, needs GEMINI_API_KEY set)" in said["auth"]
    assert report(GEMINI).auth_choices == [
        ("oauth-personal", "Log in with Google"),
        ("gemini-api-key", "Use Gemini API key"),
    ]


#: Kimi Code 2.1.0's initialize answer as agentctl reports it (tests/kimi).
KIMI = {
    "outcome": "ok",
    "host": "this machine",
    "answer": {
        "protocol_version": 1,
        "agent_info": {"name": "Kimi Code CLI", "version": "2.1.0"},
        "agent_capabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
            "mcpCapabilities": {"http": True, "sse": True},
        },
        "auth_methods": [{"id": "login", "name": "Login with Kimi account", "needs_person": True, "env_vars": []}],
    },
}


def test_a_check_says_what_kandev_needs_and_whether_the_agent_can_ask_questions():
    said = {fact.key: fact.text for fact in report(KIMI, "kimi").facts}
    assert said["needs"] == "It has what kandev needs, taking up a session again with session/resume."
    assert said["questions"] == (
        "It can ask you structured questions: Kimi Code asks all of an AskUserQuestion call's questions in one form."
    )
    assert report(KIMI, "kimi").asks == "yes"
    # Claude's answer offers no way to take up a session; Gemini cannot ask at all.
    assert {fact.key: fact.text for fact in report(CLAUDE, "claude-acp").facts}["needs"].startswith(
        "It has what kandev needs to run sessions, but offers neither session/resume nor session/load"
    )
    gemini = report(GEMINI, "gemini")
    assert gemini.asks == "no"
    assert {fact.key: fact.text for fact in gemini.facts}["questions"] == (
        "It cannot ask you structured questions: Gemini CLI leaves its ask tool out in ACP mode "
        "and answers MCP elicitation with “Method not found”."
    )
    assert report(GEMINI, "goose").asks == "mcp-only"
    assert report(GEMINI, "opencode").asks == "no"
    # An agent no preset names is claimed neither way.
    custom = report(GEMINI, "my-agent")
    assert custom.asks == "unknown"
    assert {fact.key: fact.text for fact in custom.facts}["questions"].startswith("Kandev does not know")
    # A failed check says nothing of either.
    failed = report({"outcome": "timed_out", "seconds": 3}, "kimi")
    assert [fact.key for fact in failed.facts] == ["timed_out"]
    assert failed.asks == ""


def test_an_agent_speaking_another_protocol_is_told_what_kandev_needs():
    other = {"outcome": "ok", "answer": {**KIMI["answer"], "protocol_version": 2}}
    assert facts(other)["needs"] == "Kandev needs ACP protocol version 1: sessions with this agent will fail."
    assert facts({"outcome": "ok", "answer": {"agent_info": {"name": "bare"}}})["needs"].startswith("Kandev needs")
    loads = {"outcome": "ok", "answer": {**KIMI["answer"], "agent_capabilities": {"loadSession": True}}}
    assert facts(loads)["needs"] == "It has what kandev needs, taking up a session again with session/load."


def test_an_answer_without_capabilities_or_methods_says_so():
    said = facts({"outcome": "ok", "answer": {"agent_info": {"name": "bare"}}})
    assert said["protocol"] == "It names no ACP protocol version."
    assert said["prompt"] == "Its prompts take text and resource links only."
    assert said["auth"].startswith("It offers no sign-in methods")


def test_each_failure_has_its_sentence():
    missing = {"outcome": "cannot_start", "command": "gemini --experimental-acp", "reason": "No such file or directory"}
    assert facts(missing) == {"cannot_start": "Command not found on this machine: gemini --experimental-acp."}
    assert facts({"outcome": "cannot_start", "command": "/etc", "reason": "Permission denied"}) == {
        "cannot_start": "/etc could not be started on this machine: Permission denied."
    }
    exited = report({"outcome": "exited", "exit_code": 3, "stderr_tail": "boom\nError: no key\x1b[0m"})
    assert [f.text for f in exited.facts] == [
        "The agent exited with exit code 3 before it answered initialize. Its last lines on stderr are below."
    ]
    assert exited.stderr_tail == "boom\nError: no key[0m"  # line breaks kept, the escape character not
    assert facts({"outcome": "exited", "signal": 9}) == {
        "exited": "The agent exited on signal 9 before it answered initialize."
    }
    assert facts({"outcome": "timed_out", "seconds": 30.0}) == {
        "timed_out": "The agent did not answer initialize within 30 seconds."
    }
    assert facts({"outcome": "refused", "message": "Authentication required"}) == {
        "refused": "The agent refused initialize: Authentication required."
    }
    assert not report({"outcome": "timed_out"}).ok


def test_agent_text_is_one_short_line_and_rendered_escaped():
    hostile = {"outcome": "ok", "answer": {"agent_info": {"name": "<script>alert(1)</script>\n" + "x" * 500}}}
    (agent, *_) = report(hostile).facts
    assert "\n" not in agent.text
    assert len(agent.text) <= AGENT_TEXT_CHARS + len(" answered on this machine; it gives no version.")
    html = Template("{{ text }}").render(Context({"text": agent.text}))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=30,
)
KEYS = st.sampled_from(
    [
        "outcome",
        "answer",
        "host",
        "command",
        "reason",
        "exit_code",
        "signal",
        "stderr_tail",
        "seconds",
        "message",
        "agent_info",
        "agent_capabilities",
        "auth_methods",
        "protocol_version",
        "mcpCapabilities",
        "promptCapabilities",
        "name",
        "title",
        "version",
        "id",
        "needs_person",
        "env_vars",
        "http",
        "sse",
        "image",
        "loadSession",
        "sessionCapabilities",
        "resume",
    ]
)
#: JSON shaped like a check, so the deep paths are reached, with anything at each place.
CHECK_LIKE = st.recursive(
    JSON | st.sampled_from(["ok", "exited", "cannot_start", "timed_out", "refused", "unreachable"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=40,
)


AGENT_IDS = st.sampled_from(["", "claude-acp", "codex-acp", "gemini", "goose", "opencode", "kimi"]) | st.text(
    max_size=12
)


@given(CHECK_LIKE, AGENT_IDS)
def test_any_json_gives_plain_one_line_sentences_and_never_raises(check, agent_id):
    result = report(json.loads(json.dumps(check)), agent_id)
    assert result.asks in ("", "yes", "no", "mcp-only", "unknown")
    assert (result.asks != "") == result.ok
    assert result.facts
    for fact in result.facts:
        # Plain str: a template escapes it. A SafeString would reach the page as markup.
        assert type(fact.text) is str
        assert not isinstance(fact.text, SafeData)
        assert fact.text.strip()
        assert "\n" not in fact.text
    assert isinstance(result.stderr_tail, str)
    assert len(result.stderr_tail) <= STDERR_CHARS
    for ident, label in result.auth_choices:
        assert ident
        assert label
        assert "\n" not in ident + label


@given(st.text())
def test_agent_text_is_bounded_and_has_no_control_characters(text):
    line = agent_text(text)
    assert len(line) <= AGENT_TEXT_CHARS
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in line)
