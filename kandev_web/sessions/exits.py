"""How an agent's (or its agentctl's) end is told to an operator: "exited with code 3", "killed by signal 9".

Pure functions of what ``agent.exited`` and a process's return code say
(``docs/agent-stream.md#agentexited``): an exit status or a signal, given by
name (``"SIGKILL"``), by number, or as a negative return code as asyncio
reports a killed child.
"""

import signal
from dataclasses import dataclass

from django.utils.translation import gettext as _


@dataclass(frozen=True, slots=True)
class Ending:
    """How a process ended: exactly one of an exit code and a signal, or neither when nobody knows."""

    exit_code: int | None = None
    signal_number: int | None = None

    @property
    def signal_name(self) -> str:
        if self.signal_number is None:
            return ""
        try:
            return signal.Signals(self.signal_number).name
        except ValueError:
            return ""


def ending(exit_code: object, signal_: object = None) -> Ending:
    """Read an end as reported: ``agent.exited``'s ``exit_code`` and ``signal``, or a return code alone."""
    number = _signal_number(signal_)
    if number is not None:
        return Ending(signal_number=number)
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        return Ending(signal_number=-exit_code) if exit_code < 0 else Ending(exit_code=exit_code)
    return Ending()


def _signal_number(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value:
        if value.isdigit():
            return int(value) or None
        name = value.upper() if value.upper().startswith("SIG") else f"SIG{value.upper()}"
        try:
            return signal.Signals[name].value
        except KeyError:
            return None
    return None


def _signal_text(end: Ending) -> str:
    name = end.signal_name
    return f"{end.signal_number} ({name})" if name else str(end.signal_number)


def agent_failure(end: Ending) -> str:
    """The sentence for an agent that ended on its own while its session was live."""
    if end.signal_number is not None:
        return _("The agent was killed by signal %(signal)s.") % {"signal": _signal_text(end)}
    if end.exit_code is not None:
        return _("The agent exited unexpectedly with code %(code)d.") % {"code": end.exit_code}
    return _("The agent exited unexpectedly.")


def agentctl_failure(end: Ending) -> str:
    """The sentence for an agentctl that ended under a live session (killed, crashed, its host gone)."""
    if end.signal_number is not None:
        return _("The agent's controller stopped unexpectedly: it was killed by signal %(signal)s.") % {
            "signal": _signal_text(end)
        }
    if end.exit_code is not None:
        return _("The agent's controller stopped unexpectedly: it exited with code %(code)d.") % {"code": end.exit_code}
    return _("The agent's controller stopped unexpectedly.")
