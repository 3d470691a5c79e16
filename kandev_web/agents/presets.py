"""The ACP agents people run, as data: what a preset puts in a new agent profile's form.

A preset fills the command, the ``agent_id`` and the names of the environment
variables the agent reads its credentials from, their values left for the
operator. Each fact comes from the agent's own documentation or code:

- **Claude Code**: ``npx @agentclientprotocol/claude-agent-acp`` (the package
  ``scripts/test`` installs and the real-bridge specs run as ``node
  dist/index.js``; github.com/agentclientprotocol/claude-agent-acp README). The
  Claude CLI it drives reads ``ANTHROPIC_API_KEY`` (docs.anthropic.com, Claude
  Code "Identity and Access Management"). ``claude-acp`` is its id in the ACP
  registry (github.com/agentclientprotocol/registry), and agentctl's
  capability fixtures use it.
- **Codex**: ``npx -y @agentclientprotocol/codex-acp@2.6.0``, the maintained
  adapter (the older ``@zed-industries/codex-acp`` stops at 0.16.0); its Codex
  binary comes from an npm optional dependency. Auth methods ``api-key`` and,
  when the client advertises ``auth._meta.gateway``, ``gateway`` (a model
  server at a base URL: the profile's gateway URL). ``request_user_input`` is
  offered in Plan mode (config option ``collaboration_mode=plan``).
  Registry id ``codex-acp``. docs/decisions/agents.md#codex.
- **Gemini CLI**: ``gemini --experimental-acp`` (zed.dev docs "External
  Agents": Zed runs Gemini CLI over ACP, at least 0.2.0; newer gemini-cli
  releases also accept ``--acp``). Its ``gemini-api-key`` auth method reads
  ``GEMINI_API_KEY`` (github.com/google-gemini/gemini-cli, docs
  "Authentication"). Registry id ``gemini``.
- **Goose**: ``goose acp`` (block.github.io/goose/docs/guides/acp-clients: "The
  client runs the goose acp command", goose 1.8.0 or later). Goose reads its
  provider from ``GOOSE_PROVIDER`` and ``GOOSE_MODEL`` and the provider's own
  key, e.g. ``ANTHROPIC_API_KEY`` (goose docs "Configuration: environment
  variables"). Registry id ``goose``.
- **OpenCode**: ``opencode acp`` (opencode.ai/docs/cli/acp: one auth method,
  ``opencode-login``; sign in on the host first with ``opencode auth login``,
  no variable is required). Registry id ``opencode``.
- **Kimi Code**: ``npx -y @moonshot-ai/kimi-code@2.1.0 acp`` (the package
  ``scripts/test`` installs and tests/kimi runs as ``node dist/main.mjs acp``;
  its ``engines`` need node >= 22.19). Its one auth method, ``login``, is a
  terminal login to a Kimi account, not needed when the configured model's
  provider in ``~/.kimi-code/config.toml`` has an ``api_key``. Pinned to the
  version kandev's tests prove.
- **Custom**: any argv; nothing filled in.

Each preset also says whether its agent can ask the operator structured
questions over ACP, and why (``Questions``; docs/decisions/agents.md#who-can-ask):
what the profile page tells an operator before a session needs it.
"""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class Asks(StrEnum):
    """Whether an agent can ask the operator structured questions (form elicitation) over ACP."""

    YES = "yes"
    #: Only the forms of its MCP servers reach kandev; the agent itself asks none.
    MCP_ONLY = "mcp-only"
    NO = "no"


@dataclass(frozen=True)
class Questions:
    asks: Asks
    #: Why, in a sentence, from the agent's own code or documentation.
    reason: str | Promise


@dataclass(frozen=True)
class Preset:
    key: str
    label: str | Promise
    agent_id: str
    command: tuple[str, ...]
    #: The variables the agent needs, their values for the operator to fill in.
    env_vars: tuple[str, ...] = ()
    #: What the operator still has to do on the agent's host, in a sentence.
    hint: str | Promise = ""
    #: ACP session config options the profile starts with (``option``, ``value``).
    config_options: tuple[tuple[str, str], ...] = ()
    #: Whether the agent asks structured questions over ACP; None: kandev does not know (a custom agent).
    questions: Questions | None = None

    @property
    def questions_sentence(self) -> str:
        return questions_sentence(self.questions)


def questions_sentence(questions: Questions | None) -> str:
    """What the profile page says of an agent's questions: whether it can ask them over ACP, and why."""
    if questions is None:
        return gettext(
            "Kandev does not know whether this agent asks structured questions; any form it sends is shown to you."
        )
    if questions.asks == Asks.YES:
        return gettext("It can ask you structured questions: %(reason)s") % {"reason": questions.reason}
    if questions.asks == Asks.MCP_ONLY:
        return gettext("Only its MCP servers can ask you structured questions: %(reason)s") % {
            "reason": questions.reason
        }
    return gettext("It cannot ask you structured questions: %(reason)s") % {"reason": questions.reason}


PRESETS: tuple[Preset, ...] = (
    Preset(
        key="claude-code",
        label=_("Claude Code"),
        agent_id="claude-acp",
        command=("npx", "-y", "@agentclientprotocol/claude-agent-acp"),
        env_vars=("ANTHROPIC_API_KEY",),
        hint=_("Needs Node.js 18 or later on the agent's host; npx fetches the bridge on first use."),
        questions=Questions(
            Asks.YES,
            _("The bridge asks Claude's AskUserQuestion questions and its MCP servers' forms as form elicitations."),
        ),
    ),
    Preset(
        key="codex",
        label=_("Codex"),
        agent_id="codex-acp",
        command=("npx", "-y", "@agentclientprotocol/codex-acp@2.6.0"),
        env_vars=("OPENAI_API_KEY",),
        hint=_(
            "Needs Node.js 18 or later; npx fetches the adapter and Codex (about 460 MB) on first use. Give "
            "OPENAI_API_KEY, or a model gateway URL (its headers under Secrets as KANDEV_GATEWAY_HEADERS); a "
            "ChatGPT sign-in needs a person at the host. Codex asks questions in Plan mode: collaboration_mode=plan."
        ),
        questions=Questions(
            Asks.YES, _("Codex asks its request_user_input questions and its MCP servers' forms as form elicitations.")
        ),
    ),
    Preset(
        key="gemini",
        label=_("Gemini CLI"),
        agent_id="gemini",
        command=("gemini", "--experimental-acp"),
        env_vars=("GEMINI_API_KEY",),
        hint=_("Install it with npm install -g @google/gemini-cli; choose the gemini-api-key sign-in after a check."),
        questions=Questions(
            Asks.NO,
            _("Gemini CLI leaves its ask tool out in ACP mode and answers MCP elicitation with “Method not found”."),
        ),
    ),
    Preset(
        key="goose",
        label=_("Goose"),
        agent_id="goose",
        command=("goose", "acp"),
        env_vars=("GOOSE_PROVIDER", "GOOSE_MODEL", "ANTHROPIC_API_KEY"),
        hint=_("Goose 1.8.0 or later; give the key of the provider GOOSE_PROVIDER names."),
        questions=Questions(
            Asks.MCP_ONLY, _("Goose sends form elicitations for its MCP servers only; it asks no questions of its own.")
        ),
    ),
    Preset(
        key="opencode",
        label=_("OpenCode"),
        agent_id="opencode",
        command=("opencode", "acp"),
        hint=_("Sign in on the agent's host first with opencode auth login, as the user agents run as."),
        questions=Questions(Asks.NO, _("OpenCode has no elicitation: it cannot ask over ACP.")),
    ),
    Preset(
        key="kimi-code",
        label=_("Kimi Code"),
        agent_id="kimi",
        command=("npx", "-y", "@moonshot-ai/kimi-code@2.1.0", "acp"),
        hint=_(
            "Needs Node.js 22.19 or later on the agent's host. Give a model provider and its api_key in "
            "~/.kimi-code/config.toml there, or sign in once with kimi login."
        ),
        questions=Questions(Asks.YES, _("Kimi Code asks all of an AskUserQuestion call's questions in one form.")),
    ),
    Preset(key="custom", label=_("Custom"), agent_id="", command=()),
)

BY_KEY = {preset.key: preset for preset in PRESETS}
BY_AGENT_ID = {preset.agent_id: preset for preset in PRESETS if preset.agent_id}


def preset(key: str) -> Preset | None:
    return BY_KEY.get(key)


def for_agent(agent_id: str) -> Preset | None:
    """The preset of the agent a profile names by its ``agent_id`` (however its command was edited)."""
    return BY_AGENT_ID.get(agent_id)
