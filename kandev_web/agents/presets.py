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
- **Custom**: any argv; nothing filled in.
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


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


PRESETS: tuple[Preset, ...] = (
    Preset(
        key="claude-code",
        label=_("Claude Code"),
        agent_id="claude-acp",
        command=("npx", "-y", "@agentclientprotocol/claude-agent-acp"),
        env_vars=("ANTHROPIC_API_KEY",),
        hint=_("Needs Node.js 18 or later on the agent's host; npx fetches the bridge on first use."),
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
    ),
    Preset(
        key="gemini",
        label=_("Gemini CLI"),
        agent_id="gemini",
        command=("gemini", "--experimental-acp"),
        env_vars=("GEMINI_API_KEY",),
        hint=_("Install it with npm install -g @google/gemini-cli; choose the gemini-api-key sign-in after a check."),
    ),
    Preset(
        key="goose",
        label=_("Goose"),
        agent_id="goose",
        command=("goose", "acp"),
        env_vars=("GOOSE_PROVIDER", "GOOSE_MODEL", "ANTHROPIC_API_KEY"),
        hint=_("Goose 1.8.0 or later; give the key of the provider GOOSE_PROVIDER names."),
    ),
    Preset(
        key="opencode",
        label=_("OpenCode"),
        agent_id="opencode",
        command=("opencode", "acp"),
        hint=_("Sign in on the agent's host first with opencode auth login, as the user agents run as."),
    ),
    Preset(key="custom", label=_("Custom"), agent_id="", command=()),
)

BY_KEY = {preset.key: preset for preset in PRESETS}


def preset(key: str) -> Preset | None:
    return BY_KEY.get(key)
