"""What an agent offers its session's composer: modes, slash commands and on/off options, as stored.

The agent says these in its ``session/new`` (or resume) answer and in
``session/update``s (``current_mode_update``, ``available_commands_update``,
``config_option_update``). All of it is agent text, so it is cut down here
before it is kept: only well-formed entries, at most so many of each, every
text capped, ids unique; templates escape what is left. Nothing here trusts
the agent to stay within what it advertised: a current mode it never offered
is ignored, and an option of a type the composer cannot show is left out
(ACP says a client ignores those; the agent keeps their defaults).

Pure functions of JSON values, so that hostile input can be thrown at them
freely (``tests/sessions/test_offers.py``).
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

#: At most this many of each are kept; an agent offering more is cut off in its order.
MAX_MODES = 20
MAX_COMMANDS = 100
MAX_OPTIONS = 20
#: Ids, as agentctl takes them back (``agent.session.set_mode``/``set_config_option``).
ID_CHARS = 200
NAME_CHARS = 80
DESCRIPTION_CHARS = 300
#: A command's name is what follows ``/`` in the prompt: no spaces, no slash.
_COMMAND_NAME = re.compile(rf"[^\s/]{{1,{NAME_CHARS}}}")


class Mode(TypedDict):
    id: str
    name: str
    description: str


class Modes(TypedDict):
    current: str
    available: list[Mode]


class Command(TypedDict):
    name: str
    description: str
    hint: str


class Option(TypedDict):
    id: str
    name: str
    description: str
    value: bool


def _text(value: Any, limit: int) -> str:
    """A string of the agent's, cut to ``limit`` characters, without control characters; ``""`` otherwise."""
    if not isinstance(value, str):
        return ""
    cleaned = "".join(ch for ch in value if ch.isprintable() or ch == " ")
    return cleaned.strip()[:limit]


def _id(value: Any) -> str:
    return value if isinstance(value, str) and 0 < len(value) <= ID_CHARS and value.isprintable() else ""


def modes(raw: Any) -> Modes | dict:
    """ACP ``SessionModeState`` (``{currentModeId, availableModes}``) as kept; ``{}`` when there is none to show.

    A current mode that is not among the available ones falls back to the
    first, and a session with fewer than two modes offers no choice.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("availableModes"), list):
        return {}
    available: list[Mode] = []
    seen: set[str] = set()
    for entry in raw["availableModes"]:
        if len(available) == MAX_MODES:
            break
        mode_id = _id(entry.get("id")) if isinstance(entry, dict) else ""
        if not mode_id or mode_id in seen:
            continue
        seen.add(mode_id)
        name = _text(entry.get("name"), NAME_CHARS) or mode_id[:NAME_CHARS]
        available.append(
            {"id": mode_id, "name": name, "description": _text(entry.get("description"), DESCRIPTION_CHARS)}
        )
    if len(available) < 2:
        return {}
    current = raw.get("currentModeId")
    return {
        "current": current if isinstance(current, str) and current in seen else available[0]["id"],
        "available": available,
    }


def with_current_mode(kept: Any, mode_id: Any) -> Modes | dict:
    """``kept`` (as :func:`modes` made it) now in ``mode_id``; unchanged when that is no mode it offers."""
    if not isinstance(kept, dict) or not isinstance(kept.get("available"), list):
        return kept if isinstance(kept, dict) else {}
    if not any(mode.get("id") == mode_id for mode in kept["available"]):
        return kept
    return {**kept, "current": mode_id}


def commands(raw: Any) -> list[Command]:
    """ACP ``AvailableCommand``s (``{name, description, input?: {hint}}``) as kept, in the agent's order."""
    if not isinstance(raw, list):
        return []
    kept: list[Command] = []
    seen: set[str] = set()
    for entry in raw:
        if len(kept) == MAX_COMMANDS:
            break
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _COMMAND_NAME.fullmatch(name) or not name.isprintable() or name in seen:
            continue
        seen.add(name)
        command_input = entry.get("input")
        hint = command_input.get("hint") if isinstance(command_input, dict) else None
        kept.append(
            {
                "name": name,
                "description": _text(entry.get("description"), DESCRIPTION_CHARS),
                "hint": _text(hint, NAME_CHARS),
            }
        )
    return kept


def options(raw: Any) -> list[Option]:
    """The boolean ones of ACP ``SessionConfigOption``s as kept, in the agent's order; other types are left out."""
    if not isinstance(raw, list):
        return []
    kept: list[Option] = []
    seen: set[str] = set()
    for entry in raw:
        if len(kept) == MAX_OPTIONS:
            break
        if not isinstance(entry, dict) or entry.get("type") != "boolean":
            continue
        option_id = _id(entry.get("id"))
        value = entry.get("currentValue")
        if not option_id or option_id in seen or not isinstance(value, bool):
            continue
        seen.add(option_id)
        kept.append(
            {
                "id": option_id,
                "name": _text(entry.get("name"), NAME_CHARS) or option_id[:NAME_CHARS],
                "description": _text(entry.get("description"), DESCRIPTION_CHARS),
                "value": value,
            }
        )
    return kept


def offers_option(kept: Any, option_id: str) -> bool:
    """Whether ``kept`` (as :func:`options` made it) has an option ``option_id``."""
    return isinstance(kept, list) and any(isinstance(o, dict) and o.get("id") == option_id for o in kept)


def offers_mode(kept: Any, mode_id: str) -> bool:
    """Whether ``kept`` (as :func:`modes` made it) offers the mode ``mode_id``."""
    available = kept.get("available") if isinstance(kept, dict) else None
    return isinstance(available, list) and any(isinstance(m, dict) and m.get("id") == mode_id for m in available)
