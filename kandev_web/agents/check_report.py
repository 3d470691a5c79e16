"""What a profile's check found, in sentences: the pure half of "Check a profile".

:func:`report` turns the stored outcome of a check (``profile_checks`` writes
it: agentctl's ``agent.initialize`` answer, or why there is none) into facts an
operator reads. The outcome is JSON and, past its first keys, the agent's own
words: any value may be missing, of another type, or hostile. So nothing here
trusts a type, every agent string is cut to one short line, and the sentences
are plain ``str`` — never marked safe — so templates escape them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from kandev_web.agentctl.acp_client import PROTOCOL_VERSION
from kandev_web.agentctl.capabilities import resume_method

from .presets import for_agent, questions_sentence

#: Longest piece of agent text (a name, a version, a method's description) put in a sentence.
AGENT_TEXT_CHARS = 120
#: Longest stderr tail shown under a failed check.
STDERR_CHARS = 4000

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: What a stderr tail keeps of control characters: its line breaks and tabs.
_TAIL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Outcome:
    """The ``outcome`` values a stored check may carry."""

    OK = "ok"
    CANNOT_START = "cannot_start"
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    REFUSED = "refused"
    UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class Fact:
    """One sentence, with a stable key tests and styles can select on."""

    key: str
    text: str


@dataclass(frozen=True)
class Report:
    ok: bool
    outcome: str
    facts: list[Fact]
    #: The agent's last stderr lines (failed checks only): shown preformatted, escaped.
    stderr_tail: str = ""
    #: The auth methods offered, for the profile's choice: (id, label) pairs.
    auth_choices: list[tuple[str, str]] = field(default_factory=list)
    #: Whether the agent can ask structured questions (``presets.Asks``, or "unknown"); "" for a failed check.
    asks: str = ""


def agent_text(value: object, limit: int = AGENT_TEXT_CHARS) -> str:
    """A piece of agent text as one short line, or "" when it is not text at all."""
    if not isinstance(value, str):
        return ""
    line = " ".join(_CONTROL.sub(" ", value).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _flag(value: object) -> bool:
    return value is True


def report(check: object, agent_id: str = "") -> Report:
    """The facts of one stored check of a profile naming ``agent_id``; never raises, whatever ``check`` holds."""
    check = _mapping(check)
    outcome = check.get("outcome")
    where = agent_text(check.get("host")) or _("this machine")
    if outcome == Outcome.OK:
        return _answer_report(_mapping(check.get("answer")), where, agent_id)
    tail = check.get("stderr_tail")
    tail = _TAIL_CONTROL.sub("", tail)[-STDERR_CHARS:] if isinstance(tail, str) else ""
    return Report(ok=False, outcome=str(outcome or ""), facts=[_failure(check, outcome, where)], stderr_tail=tail)


def _failure(check: dict[str, Any], outcome: object, where: str) -> Fact:
    command = agent_text(check.get("command"), 300) or _("the profile's command")
    reason = agent_text(check.get("reason"), 300)
    if outcome == Outcome.CANNOT_START:
        if "no such file" in reason.lower():
            text = _("Command not found on %(host)s: %(command)s.") % {"host": where, "command": command}
        else:
            text = _("%(command)s could not be started on %(host)s: %(reason)s.") % {
                "command": command,
                "host": where,
                "reason": reason or _("no reason given"),
            }
    elif outcome == Outcome.EXITED:
        code = check.get("exit_code")
        signal = check.get("signal")
        if isinstance(code, int) and not isinstance(code, bool):
            how = _("with exit code %(code)d") % {"code": code}
        elif isinstance(signal, int) and not isinstance(signal, bool):
            how = _("on signal %(signal)d") % {"signal": signal}
        else:
            how = _("unexpectedly")
        text = _("The agent exited %(how)s before it answered initialize.") % {"how": how}
        if check.get("stderr_tail"):
            text += " " + _("Its last lines on stderr are below.")
    elif outcome == Outcome.TIMED_OUT:
        seconds = check.get("seconds")
        seconds = seconds if isinstance(seconds, int | float) and not isinstance(seconds, bool) else 0
        text = _("The agent did not answer initialize within %(seconds)s seconds.") % {"seconds": f"{seconds:g}"}
    elif outcome == Outcome.REFUSED:
        text = _("The agent refused initialize: %(message)s.") % {
            "message": agent_text(check.get("message"), 300) or _("no reason given")
        }
    elif outcome == Outcome.UNREACHABLE:
        text = _("agentctl could not be started on %(host)s: %(message)s.") % {
            "host": where,
            "message": agent_text(check.get("message"), 300) or _("no reason given"),
        }
    else:
        text = _("The check did not finish.")
    return Fact(str(outcome or "unknown"), text)


def _answer_report(answer: dict[str, Any], where: str, agent_id: str) -> Report:
    info = _mapping(answer.get("agent_info"))
    capabilities = _mapping(answer.get("agent_capabilities"))
    name = agent_text(info.get("title")) or agent_text(info.get("name")) or _("The agent")
    version = agent_text(info.get("version"))
    if version:
        identity = _("%(name)s %(version)s answered on %(host)s.") % {"name": name, "version": version, "host": where}
    else:
        identity = _("%(name)s answered on %(host)s; it gives no version.") % {"name": name, "host": where}
    facts = [Fact("agent", identity), Fact("protocol", _protocol(answer.get("protocol_version")))]
    facts.append(Fact("mcp", _mcp(_mapping(capabilities.get("mcpCapabilities")))))
    facts.append(Fact("prompt", _prompt(_mapping(capabilities.get("promptCapabilities")))))
    methods = [_mapping(method) for method in answer.get("auth_methods") or [] if isinstance(method, dict)]
    methods = [method for method in methods if agent_text(method.get("id"))]
    facts.append(Fact("auth", _auth(methods)))
    facts.append(Fact("needs", _needs(answer.get("protocol_version"), capabilities)))
    facts.append(Fact("questions", questions_fact(agent_id)))
    choices = [(agent_text(m["id"]), agent_text(m.get("name")) or agent_text(m["id"])) for m in methods]
    known = for_agent(agent_id)
    asks = str(known.questions.asks) if known and known.questions else "unknown"
    return Report(ok=True, outcome=Outcome.OK, facts=facts, auth_choices=choices, asks=asks)


def _protocol(version: object) -> str:
    if isinstance(version, int) and not isinstance(version, bool):
        return _("It speaks ACP protocol version %(version)d.") % {"version": version}
    return _("It names no ACP protocol version.")


def _mcp(mcp: dict[str, Any]) -> str:
    http, sse = _flag(mcp.get("http")), _flag(mcp.get("sse"))
    if http and sse:
        transports = _("It takes MCP servers over stdio, HTTP and SSE.")
    elif http:
        transports = _("It takes MCP servers over stdio and HTTP, not SSE.")
    elif sse:
        transports = _("It takes MCP servers over stdio and SSE, not HTTP.")
    else:
        transports = _("It takes MCP servers over stdio only, not HTTP or SSE.")
    kandev = (
        _("Kandev's MCP server reaches it over HTTP.")
        if http
        else _("Kandev's MCP server reaches it over stdio, through kandev-mcp-stdio.")
    )
    return f"{transports} {kandev}"


def _prompt(prompt: dict[str, Any]) -> str:
    kinds = [
        label
        for key, label in (("image", _("images")), ("audio", _("audio")), ("embeddedContext", _("embedded context")))
        if _flag(prompt.get(key))
    ]
    if not kinds:
        return _("Its prompts take text and resource links only.")
    return _("Its prompts also take %(kinds)s.") % {"kinds": ", ".join(kinds)}


def _auth(methods: list[dict[str, Any]]) -> str:
    if not methods:
        return _("It offers no sign-in methods: it needs none, or finds its credentials itself.")
    described = []
    for method in methods:
        label = agent_text(method.get("name")) or agent_text(method["id"])
        ident = agent_text(method["id"])
        variables = [agent_text(v, 60) for v in method.get("env_vars") or [] if agent_text(v, 60)]
        if _flag(method.get("needs_person")):
            needs = _("needs a person to sign in")
        elif variables:
            needs = _("needs %(vars)s set") % {"vars": ", ".join(variables)}
        else:
            needs = _("needs nobody")
        described.append(_("%(label)s (%(id)s, %(needs)s)") % {"label": label, "id": ident, "needs": needs})
    return _("It offers these sign-in methods: %(methods)s.") % {"methods": "; ".join(described)}


def _needs(version: object, capabilities: dict[str, Any]) -> str:
    """Whether the agent advertised what kandev's agentctl needs of it: its protocol, and taking up a session."""
    if not isinstance(version, int) or isinstance(version, bool) or version != PROTOCOL_VERSION:
        return _("Kandev needs ACP protocol version %(version)d: sessions with this agent will fail.") % {
            "version": PROTOCOL_VERSION
        }
    method = resume_method(capabilities)
    if method is None:
        return _(
            "It has what kandev needs to run sessions, but offers neither session/resume nor session/load: "
            "a session cannot be taken up again once its agent stopped."
        )
    return _("It has what kandev needs, taking up a session again with %(method)s.") % {
        "method": "session/resume" if method == "resume" else "session/load"
    }


def questions_fact(agent_id: str) -> str:
    """Whether the agent ``agent_id`` names can ask the operator structured questions over ACP, and why.

    From the agent's preset: an agent's ``initialize`` answer does not say
    whether it will ever send a form elicitation.
    """
    known = for_agent(agent_id)
    return questions_sentence(known.questions if known else None)
