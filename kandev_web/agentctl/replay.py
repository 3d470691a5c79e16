"""What agentctl keeps of its notifications, for a client that resumes after a sequence number.

A web process that restarts, or takes over from a dead one, connects with the
last ``seq`` it applied and must be sent everything after it
(``docs/agent-stream.md#resuming``). agentctl cannot keep everything an agent
ever said, so it keeps what such a client may still need: the current turn
and the one before it (a client that has applied the previous turn's end
needs nothing older), within a bound in bytes. A client asking for more than
was kept is told so (``stream.gap``) and reconciles from the lists.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice

REPLAY_BYTES_VAR = "KANDEV_AGENTCTL_REPLAY_BYTES"
DEFAULT_REPLAY_BYTES = "8m"

#: The notification that ends a turn: what came before the previous one is no longer needed.
TURN_END = "turn.completed"

_UNIT_BYTES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SIZE = re.compile(r"([0-9]+)([kmg]?)")


class SizeError(ValueError):
    """A size agentctl cannot run with."""


def parse_size(text: str) -> int:
    """Parse ``512k``, ``8m``, ``1g`` (binary units) or plain bytes into a positive number of bytes."""
    match = _SIZE.fullmatch(text.strip().lower())
    if match is None:
        raise SizeError(f"{text!r} is not a size; write it like 512k, 8m, 1g or plain bytes")
    size = int(match[1]) * _UNIT_BYTES[match[2]]
    if size == 0:
        # Zero would look like "no limit" to some; it would mean "never resume".
        raise SizeError(f"{text!r} is not a usable size; it must be more than zero")
    return size


def load_replay_bytes(environ: Mapping[str, str]) -> int:
    """The replay bound from ``KANDEV_AGENTCTL_REPLAY_BYTES``; an empty value means the default."""
    try:
        return parse_size(environ.get(REPLAY_BYTES_VAR) or DEFAULT_REPLAY_BYTES)
    except SizeError as error:
        raise SizeError(f"{REPLAY_BYTES_VAR}: {error}") from None


@dataclass(frozen=True)
class _Kept:
    seq: int
    frame: str
    size: int


class ReplayBuffer:
    """The latest notifications, in order, with contiguous ``seq``s ending at the last one added.

    Pure bookkeeping: the server adds each notification as it broadcasts it
    and asks ``since`` when a client resumes.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: deque[_Kept] = deque()
        self._bytes = 0
        self._last_seq = 0
        self._last_turn_end: int | None = None

    @property
    def last_seq(self) -> int:
        """The seq of the last notification added; 0 before the first."""
        return self._last_seq

    @property
    def first_kept_seq(self) -> int:
        """The oldest seq still kept; when none is, the next one to come."""
        return self._kept[0].seq if self._kept else self._last_seq + 1

    @property
    def size(self) -> int:
        """The bytes of encoded frames kept."""
        return self._bytes

    def add(self, seq: int, action: str, frame: str) -> None:
        """Keep one more notification (the next ``seq``), dropping what is no longer needed or fits."""
        if seq != self._last_seq + 1:
            raise ValueError(f"seq {seq} does not follow {self._last_seq}")
        self._last_seq = seq
        self._kept.append(_Kept(seq, frame, len(frame.encode("utf-8", "surrogatepass"))))
        self._bytes += self._kept[-1].size
        if action == TURN_END:
            if self._last_turn_end is not None:
                self._drop_through(self._last_turn_end)
            self._last_turn_end = seq
        while self._bytes > self.max_bytes:
            self._drop_oldest()

    def since(self, after_seq: int) -> tuple[bool, list[str]]:
        """What a client that has applied ``after_seq`` is owed: ``(gap, frames)``.

        ``frames`` are the kept ones after ``after_seq``, in order. ``gap`` says
        that some notification after ``after_seq`` was dropped, so that the
        client cannot learn it from ``frames``.
        """
        first = self.first_kept_seq
        gap = after_seq + 1 < first
        skip = max(0, after_seq + 1 - first)
        return gap, [kept.frame for kept in islice(self._kept, skip, None)]

    def _drop_through(self, seq: int) -> None:
        while self._kept and self._kept[0].seq <= seq:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        self._bytes -= self._kept.popleft().size
