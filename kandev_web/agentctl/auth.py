"""Which ACP auth method agentctl may use on its own, and what to tell a person otherwise.

An agent lists ``authMethods`` in its ``initialize`` answer; agentctl calls
``authenticate`` with one of them before ``session/new`` (the profile chose
it, or ``session/new`` said ``-32000`` "Authentication required"). Nobody
watches agentctl's terminal and no browser opens on its host, so a method
that needs a person is never attempted: the session fails with a sentence
saying what to run where instead. The rule (docs/decisions/across-processes.md#acp-sign-in):

- ``type: "terminal"`` needs a person (ACP: the client runs the agent's login
  in a terminal, never through ``authenticate``);
- so does a method whose ``_meta`` carries ``terminal-auth`` (the Claude
  bridge's login command, before ACP had the ``terminal`` type);
- so does an ``agent``-type method (the default) whose id, name or
  description speaks of logging in, signing in, a browser or OAuth — "Log in
  with Google", "Login with ChatGPT";
- ``type: "env_var"`` needs none, once its variables are in the agent's
  environment; nor does any other ``agent``-type method ("Use Gemini API key").

Pure functions over the agent's JSON: no I/O, nothing here trusts its shape.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: JSON-RPC error code ACP agents answer with when a request needs authentication first.
AUTH_REQUIRED_CODE = -32000

_PERSON_WORDS = re.compile(r"log[\s-]?in|sign[\s-]?in|browser|oauth", re.IGNORECASE)

#: How much of the agent's own text (names, descriptions) a sentence quotes.
_QUOTED_CHARS = 200


@dataclass(frozen=True)
class AuthMethod:
    """One entry of ``authMethods``, read defensively."""

    id: str
    name: str
    description: str
    type: str
    #: The environment variables an ``env_var`` method reads.
    variables: tuple[str, ...]
    #: What a ``terminal`` method appends to the agent's own command for its login.
    args: tuple[str, ...]
    #: A whole login command the agent names in ``_meta``.
    command: tuple[str, ...]
    #: Codex's ``gateway`` method (``_meta.gateway``): sign-in to a model server at a base URL the client names.
    gateway: bool = False

    def needs_person(self) -> bool:
        """Whether signing in with this method takes a browser or a terminal someone types into."""
        if self.type == "terminal" or self.command:
            return True
        if self.type == "env_var":
            return False
        return bool(_PERSON_WORDS.search(" ".join((self.id, self.name, self.description))))

    def missing_variables(self, env: Mapping[str, str]) -> list[str]:
        """The variables this method reads that are unset or empty in ``env``."""
        return [name for name in self.variables if not env.get(name)]

    def summary(self) -> dict[str, Any]:
        """What ``agent.initialize`` reports for it."""
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "needs_person": self.needs_person(),
            "env_vars": list(self.variables),
        }


def parse_methods(raw: Any) -> list[AuthMethod]:
    """The usable entries of an ``authMethods`` value; anything without a string id is skipped."""
    if not isinstance(raw, list):
        return []
    methods = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            continue
        method_id = entry["id"]
        kind = entry["type"] if isinstance(entry.get("type"), str) else "agent"
        methods.append(
            AuthMethod(
                id=method_id,
                name=_text(entry.get("name")) or method_id,
                description=_text(entry.get("description")),
                type=kind,
                variables=_variables(entry),
                args=_strings(entry.get("args")),
                command=_command(entry),
                gateway=isinstance(entry.get("_meta"), dict) and isinstance(entry["_meta"].get("gateway"), dict),
            )
        )
    return methods


def find(methods: Sequence[AuthMethod], method_id: str) -> AuthMethod | None:
    return next((method for method in methods if method.id == method_id), None)


def automatic_method(methods: Sequence[AuthMethod], env: Mapping[str, str]) -> AuthMethod | None:
    """The method agentctl picks itself when none was chosen: an ``env_var`` one whose variables are all set."""
    for method in methods:
        if method.type == "env_var" and method.variables and not method.missing_variables(env):
            return method
    return None


def person_sentence(agent: str, method: AuthMethod, *, host: str, agent_argv: Sequence[str]) -> str:
    """What to run where, for a method agentctl will not attempt."""
    if method.command:
        run = shlex.join(method.command)
    elif method.type == "terminal":
        run = shlex.join([*agent_argv, *method.args])
    else:
        run = shlex.join(agent_argv[:1])
    return (
        f"{_quote(agent)} needs someone to sign in with “{_quote(method.name)}”, which Kandev cannot do for it: "
        f"on {host}, as the user that runs its agents, run `{run}` in a terminal and sign in, "
        "then start the session again."
    )


def missing_variables_sentence(agent: str, method: AuthMethod, missing: Sequence[str]) -> str:
    names = ", ".join(missing)
    return (
        f"{_quote(agent)} signs in with “{_quote(method.name)}” from the environment variable(s) {names}: "
        "add them to the agent profile's environment, then start the session again."
    )


def unchosen_sentence(agent: str, methods: Sequence[AuthMethod], *, host: str, agent_argv: Sequence[str]) -> str:
    """``session/new`` said authentication is required and no method was chosen or could be picked."""
    if not methods:
        return (
            f"{_quote(agent)} says it needs authentication but offers no way to sign in: "
            f"check its setup on {host} (its documentation says how), then start the session again."
        )
    unattended = [method for method in methods if not method.needs_person()]
    if unattended:
        names = ", ".join(f"“{_quote(method.name)}” ({method.id})" for method in unattended)
        return (
            f"{_quote(agent)} needs you to sign in first: choose one of its auth methods in the agent profile, "
            f"e.g. {names}, then start the session again."
        )
    return person_sentence(agent, methods[0], host=host, agent_argv=agent_argv)


def gateway_missing_sentence(agent: str, method: AuthMethod) -> str:
    return (
        f"{_quote(agent)} signs in with “{_quote(method.name)}” through a model gateway: "
        "set the gateway's base URL in the agent profile, then start the session again."
    )


#: agentctl's environment variable holding the gateway's headers, a JSON object of strings.
#: The web app opens it from the profile's sealed secrets and names it a secret, so it is scrubbed.
GATEWAY_HEADERS_VAR = "KANDEV_GATEWAY_HEADERS"


def gateway_headers(env: Mapping[str, str]) -> dict[str, str] | None:
    """The gateway's headers from ``env`` (``{}`` when unset); None when they are not a JSON object of strings."""
    raw = env.get(GATEWAY_HEADERS_VAR, "")
    if not raw:
        return {}
    try:
        headers = json.loads(raw)
    except ValueError:
        return None
    if not (isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())):
        return None
    return headers


def gateway_headers_sentence(agent: str, method: AuthMethod) -> str:
    return (
        f"{_quote(agent)} cannot sign in with “{_quote(method.name)}”: the gateway headers are not a JSON object "
        f"of strings ({GATEWAY_HEADERS_VAR}); enter them again in the agent profile, then start the session again."
    )


def gateway_meta(base_url: str, provider_name: str, headers: Mapping[str, str]) -> dict[str, Any]:
    """``authenticate``'s ``_meta`` for the gateway method (codex-acp 2.6.0's shape)."""
    return {"gateway": {"baseUrl": base_url, "headers": dict(headers), "providerName": provider_name}}


def refused_sentence(agent: str, method: AuthMethod, message: str) -> str:
    return (
        f"{_quote(agent)} refused to sign in with “{_quote(method.name)}”: {_quote(message)}. "
        "Check the agent profile's environment, then start the session again."
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 1] + "…"


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return ()
    return tuple(value)


def _variables(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """``vars: [{"name"}]`` (ACP) or ``varName`` (its earlier draft)."""
    names = [item.get("name") for item in entry.get("vars") or [] if isinstance(item, dict)]
    if isinstance(entry.get("varName"), str):
        names.append(entry["varName"])
    return tuple(name for name in names if isinstance(name, str) and name)


def _command(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """A login command the agent names: ``_meta["terminal-auth"]`` (``command`` and ``args``)."""
    meta = entry.get("_meta")
    terminal = meta.get("terminal-auth") if isinstance(meta, dict) else None
    if isinstance(terminal, dict) and isinstance(terminal.get("command"), str) and terminal["command"]:
        return (terminal["command"], *_strings(terminal.get("args")))
    return ()
