"""The presets a new agent profile starts from, and what each fills in the form."""

import pytest

from kandev_web.agents.presets import PRESETS, Asks, for_agent, preset
from kandev_web.agents.profile_forms import AgentProfileForm


def test_every_agent_the_issue_names_has_a_preset_and_custom_is_empty():
    assert [p.key for p in PRESETS] == ["claude-code", "codex", "gemini", "goose", "opencode", "kimi-code", "custom"]
    custom = preset("custom")
    assert (custom.command, custom.agent_id, custom.env_vars) == ((), "", ())
    assert preset("nope") is None


@pytest.mark.parametrize(
    ("key", "command", "agent_id", "env_vars"),
    [
        ("claude-code", ("npx", "-y", "@agentclientprotocol/claude-agent-acp"), "claude-acp", ("ANTHROPIC_API_KEY",)),
        ("codex", ("npx", "-y", "@agentclientprotocol/codex-acp@2.6.0"), "codex-acp", ("OPENAI_API_KEY",)),
        ("gemini", ("gemini", "--experimental-acp"), "gemini", ("GEMINI_API_KEY",)),
        ("goose", ("goose", "acp"), "goose", ("GOOSE_PROVIDER", "GOOSE_MODEL", "ANTHROPIC_API_KEY")),
        ("opencode", ("opencode", "acp"), "opencode", ()),
        ("kimi-code", ("npx", "-y", "@moonshot-ai/kimi-code@2.1.0", "acp"), "kimi", ()),
    ],
)
def test_each_preset_has_the_agents_documented_command_id_and_variables(key, command, agent_id, env_vars):
    chosen = preset(key)
    assert (chosen.command, chosen.agent_id, chosen.env_vars) == (command, agent_id, env_vars)
    assert str(chosen.label)
    assert str(chosen.hint)


def test_a_preset_fills_the_form_with_its_command_and_variable_names_left_empty(workspace):
    form = AgentProfileForm(workspace=workspace)
    form.fill_from(preset("claude-code"))
    html = str(form["command"]) + str(form["env"]) + str(form["agent_id"]) + str(form["name"])
    assert 'value="npx -y @agentclientprotocol/claude-agent-acp"' in html
    assert 'value="claude-acp"' in html
    # The key is a secret to set, write-only; nothing is left for the environment.
    assert 'data-secret-name="ANTHROPIC_API_KEY" data-secret-set="false"' in str(form["secrets"])
    assert "ANTHROPIC_API_KEY" not in str(form["env"])
    assert 'value="Claude Code"' in html


@pytest.mark.parametrize(
    ("key", "asks", "why"),
    [
        ("claude-code", Asks.YES, "AskUserQuestion"),
        ("codex", Asks.YES, "request_user_input"),
        ("kimi-code", Asks.YES, "AskUserQuestion"),
        ("gemini", Asks.NO, "Method not found"),
        ("opencode", Asks.NO, "no elicitation"),
        ("goose", Asks.MCP_ONLY, "MCP servers only"),
    ],
)
def test_each_preset_says_whether_its_agent_can_ask_structured_questions_and_why(key, asks, why):
    chosen = preset(key)
    assert chosen.questions.asks == asks
    assert why in str(chosen.questions.reason)
    assert for_agent(chosen.agent_id) is chosen
    sentence = chosen.questions_sentence
    assert sentence.startswith(
        {
            Asks.YES: "It can ask you structured questions: ",
            Asks.NO: "It cannot ask you structured questions: ",
            Asks.MCP_ONLY: "Only its MCP servers can ask you structured questions: ",
        }[asks]
    )
    assert why in sentence


def test_a_custom_agent_is_not_claimed_either_way():
    assert preset("custom").questions is None
    assert for_agent("") is None
    assert for_agent("my-own-agent") is None
    assert preset("custom").questions_sentence.startswith("Kandev does not know whether this agent asks")
