"""The client capabilities agentctl advertises in ACP ``initialize``, and what it reads of the agent's.

What the agent is told decides what it may do: the Claude bridge offers
``AskUserQuestion``, forwards MCP elicitations and offers the refusal-fallback
retry only when ``elicitation.form`` is advertised. With the flag off the
object must stay byte-identical to what Kandev always sent (AC-02, AC-02a);
``fixtures/`` holds those bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

ELICITATION_FLAG = "features.acpElicitation"
URL_ELICITATION_FLAG = "features.acpUrlElicitation"
#: The runtime flag that advertises boolean session config options (``session.configOptions.boolean``).
BOOLEAN_CONFIG_OPTIONS_FLAG = "features.acpBooleanConfigOptions"
CURSOR_AGENT_ID = "cursor-acp"

#: The ACP method that takes up a session an earlier agent process began.
ResumeMethod = Literal["resume", "load"]


def client_capabilities(
    agent_id: str | None,
    *,
    elicitation: bool,
    url: bool = False,
    auth_gateway: bool = False,
    boolean_config_options: bool = False,
) -> dict[str, Any]:
    """The ``clientCapabilities`` for this agent, with form elicitation or without, and with URL mode.

    ``url`` is advertised only beside ``form`` (``docs/decisions/url-mode.md#advertised-only-beside-form``):
    a form-only client receives neither url-mode requests nor ``elicitation/complete``,
    and its bytes stay those of the AC-02a fixtures.

    ``auth_gateway`` adds ``auth._meta.gateway``, which makes the Codex
    adapter offer its ``gateway`` sign-in (a model server at a base URL the
    client names). It is asked for only by a profile with a gateway
    configured, so every other agent's object stays byte-identical.

    ``boolean_config_options`` adds ``session.configOptions.boolean``: agents
    may then offer on/off options (``type: "boolean"``), which the composer
    shows as toggles. Asked for by its runtime flag, off by default, for the
    same reason (AC-02's bytes).
    """
    meta: dict[str, Any] = {"terminal_output": True}
    if agent_id == CURSOR_AGENT_ID:
        meta = {"parameterizedModelPicker": True, **meta}
    capabilities: dict[str, Any] = {"_meta": meta}
    if elicitation:
        capabilities["elicitation"] = {"form": {}, "url": {}} if url else {"form": {}}
    if auth_gateway:
        capabilities["auth"] = {"_meta": {"gateway": True}}
    if boolean_config_options:
        capabilities["session"] = {"configOptions": {"boolean": {}}}
    return capabilities


def elicitation_enabled(runtime_flags: Mapping[str, Any]) -> bool:
    """Whether the web app turned form elicitation on for this execution.

    See ``docs/decisions/across-processes.md#f5-the-flag-crosses-processes``.

    agentctl never reads the flag from its own environment: the web app
    resolves it once, when it starts the execution, and passes it here.
    """
    return runtime_flags.get(ELICITATION_FLAG) is True


def url_elicitation_enabled(runtime_flags: Mapping[str, Any]) -> bool:
    """Whether URL-mode elicitation is on: its own flag, and form elicitation's, both true.

    URL mode rides on the machinery of form elicitation (the pending request,
    its announcement and settlement, the operator's card), so it is never on
    without it.
    """
    return elicitation_enabled(runtime_flags) and runtime_flags.get(URL_ELICITATION_FLAG) is True


def boolean_config_options_enabled(runtime_flags: Mapping[str, Any]) -> bool:
    """Whether the web app turned boolean session config options on for this execution (as the flag above)."""
    return runtime_flags.get(BOOLEAN_CONFIG_OPTIONS_FLAG) is True


def canonical(capabilities: Mapping[str, Any]) -> str:
    """The fixtures' serialization: sorted keys, no spaces."""
    return json.dumps(capabilities, sort_keys=True, separators=(",", ":"))


def resume_method(agent_capabilities: Any) -> ResumeMethod | None:
    """How an agent can take up a session that an earlier process of it began; None if it cannot.

    ``session/resume`` (``sessionCapabilities.resume``) is preferred to
    ``session/load`` (``loadSession: true``): it replays nothing, and whoever
    resumes a session already has its history. ACP capabilities are objects
    that advertise by being there, so a ``null`` ``resume`` advertises nothing,
    as several agents send it.
    """
    if not isinstance(agent_capabilities, Mapping):
        return None
    session = agent_capabilities.get("sessionCapabilities")
    if isinstance(session, Mapping) and isinstance(session.get("resume"), Mapping):
        return "resume"
    if agent_capabilities.get("loadSession") is True:
        return "load"
    return None
