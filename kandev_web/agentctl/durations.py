"""The timeouts agentctl reads from its environment, and how to write them.

Durations are written the way operators write them: ``90s``, ``55m``, ``1h``,
or plain seconds (``3300``).

An elicitation nobody answers must be declined by Kandev itself, before the
ACP idle timeout would tear the connection down and lose the question
(``docs/decisions/life-of-a-question.md#f13a-timeouts``). So agentctl refuses to start unless the
answer timeout is strictly shorter than the idle timeout, rather than
discovering the race an hour into a session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

ANSWER_TIMEOUT_VAR = "KANDEV_ELICITATION_ANSWER_TIMEOUT"
IDLE_TIMEOUT_VAR = "KANDEV_ACP_IDLE_TIMEOUT"
DEFAULT_ANSWER_TIMEOUT = "55m"
DEFAULT_IDLE_TIMEOUT = "1h"
EXIT_GRACE_VAR = "KANDEV_AGENTCTL_EXIT_GRACE"
#: Longer than a web process takes to reconnect (5 s at most between tries)
#: or to adopt the execution of a dead one (three missed 5 s heartbeats).
DEFAULT_EXIT_GRACE = "30s"
UNHELD_TIMEOUT_VAR = "KANDEV_AGENTCTL_UNHELD_TIMEOUT"
#: Much longer than any restart or takeover (a web process retries every 5 s
#: at most and adopts after 15 s), yet an orphan's agent is gone in minutes.
DEFAULT_UNHELD_TIMEOUT = "10m"

_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}
_DURATION = re.compile(r"([0-9]+)([smh]?)")


class DurationError(ValueError):
    """A duration, or the pair of timeouts, that agentctl cannot run with."""


def parse_duration(text: str) -> timedelta:
    """Parse ``90s``, ``55m``, ``1h`` or plain seconds into a positive timedelta."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise DurationError(f"{text!r} is not a duration; write it like 90s, 55m, 1h or plain seconds")
    seconds = int(match[1]) * _UNIT_SECONDS[match[2]]
    if seconds == 0:
        raise DurationError(f"{text!r} is not a usable timeout; it must be longer than zero")
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise DurationError(f"{text!r} is too long to be a timeout") from None


def format_duration(duration: timedelta) -> str:
    """Write a duration back in the largest unit that states it exactly."""
    seconds = int(duration.total_seconds())
    for unit in ("h", "m"):
        if seconds % _UNIT_SECONDS[unit] == 0:
            return f"{seconds // _UNIT_SECONDS[unit]}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class Timeouts:
    """How long an operator may take to answer, and how long the ACP link may idle."""

    answer: timedelta
    idle: timedelta
    #: Once the agent has exited and no client is connected, how long agentctl
    #: waits for one to (re)connect and hear it before it exits itself.
    exit_grace: timedelta = timedelta(seconds=30)
    #: With no client connected for this long, nobody is left to hold the
    #: agent's work: agentctl cancels its turns, stops the agent and exits.
    unheld: timedelta = timedelta(minutes=10)


def load_timeouts(environ: Mapping[str, str]) -> Timeouts:
    """Read both timeouts, falling back to the defaults; enforce answer < idle."""
    answer = _read(environ, ANSWER_TIMEOUT_VAR, DEFAULT_ANSWER_TIMEOUT)
    idle = _read(environ, IDLE_TIMEOUT_VAR, DEFAULT_IDLE_TIMEOUT)
    if answer >= idle:
        raise DurationError(
            f"{ANSWER_TIMEOUT_VAR} ({format_duration(answer)}) must be shorter than "
            f"{IDLE_TIMEOUT_VAR} ({format_duration(idle)}): an unanswered question has to be "
            "declined before the agent connection idles out (decisions F13a)"
        )
    return Timeouts(
        answer=answer,
        idle=idle,
        exit_grace=_read(environ, EXIT_GRACE_VAR, DEFAULT_EXIT_GRACE),
        unheld=_read(environ, UNHELD_TIMEOUT_VAR, DEFAULT_UNHELD_TIMEOUT),
    )


def _read(environ: Mapping[str, str], name: str, default: str) -> timedelta:
    # An empty value is how shells and compose files say "unset".
    text = environ.get(name) or default
    try:
        return parse_duration(text)
    except DurationError as error:
        raise DurationError(f"{name}: {error}") from None
