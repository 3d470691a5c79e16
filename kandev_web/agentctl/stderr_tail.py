"""The last lines an agent wrote to stderr, kept so that its end can say what it printed.

An agent that crashes usually says why on stderr (a traceback, "missing API
key"); its exit code alone tells an operator nothing. agentctl keeps a bounded
tail of it and sends it with ``agent.exited``; the web app caps it again with
the same function, since any program may speak the agent stream.
"""

from __future__ import annotations

from collections import deque

from kandev_web.storable import storable_text

#: At most this many lines ...
MAX_LINES = 20
#: ... and this many bytes of UTF-8, whichever is fewer.
MAX_BYTES = 4096


def cap_tail(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> str:
    """The end of ``text``: its last ``max_lines`` lines, then its last ``max_bytes`` bytes of UTF-8.

    Cut on a character boundary, never inside one; trailing blank lines are
    dropped, since they say nothing. A NUL or a lone surrogate (an agent's
    stderr is bytes, and any program may speak the stream) becomes U+FFFD
    (``kandev_web/storable.py``), so the tail can be stored in any database
    and measured in UTF-8.
    """
    text = storable_text(text)
    lines = text.rstrip().splitlines()[-max_lines:]
    tail = "\n".join(line.rstrip() for line in lines)
    encoded = tail.encode()
    if len(encoded) <= max_bytes:
        return tail
    return encoded[-max_bytes:].decode(errors="ignore")


class StderrTail:
    """A running tail of an agent's stderr, one line at a time, bounded however much it writes."""

    def __init__(self, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._max_lines = max_lines
        self._lines: deque[str] = deque(maxlen=max_lines)

    def add(self, line: str) -> None:
        # A line longer than the whole tail keeps only its end, so one huge
        # line cannot hold more than the tail will ever show.
        self._lines.append(line.rstrip("\r\n")[-self._max_bytes :])

    def text(self) -> str:
        return cap_tail("\n".join(self._lines), max_lines=self._max_lines, max_bytes=self._max_bytes)
