"""How much of each streaming message a task page shows, so that every streamed delta is shown once.

A page is sent a streaming message whole (its first frame, a message's
creation, a render every few seconds, ``sessions.events``) and the text that
streams into it as deltas (``message.appended``) in between. A whole render
reads the row as it is by then, which may hold text whose deltas are still
queued for the same socket: appended as they come, those would show twice.
So every delta says how long the message was before it, and the socket
remembers how far the page has it: a delta is trimmed to what the page lacks.
"""

from collections.abc import Iterable

from kandev_web.sessions.models import Message


class Shown:
    """What one socket's page shows of each message still streaming, in characters."""

    def __init__(self) -> None:
        self._lengths: dict[int, int] = {}

    def rendered(self, messages: Iterable[Message]) -> None:
        """``messages`` were sent whole: the page has each of them as long as it is now."""
        for message in messages:
            if message.metadata.get("streaming"):
                self._lengths[message.pk] = len(message.content)
            else:
                # Settled: no delta follows, and nothing need be kept for it.
                self._lengths.pop(message.pk, None)

    def unseen(self, message_id: int, offset: int, text: str) -> str | None:
        """What the page lacks of ``text``, appended at ``offset``: ``""`` when it has it all.

        ``None`` when the delta cannot be applied: the page was never sent the
        message whole, or it misses text before ``offset`` (a delta that never
        reached this socket). The page then needs the whole message again.
        """
        shown = self._lengths.get(message_id)
        if shown is None or offset > shown:
            return None
        self._lengths[message_id] = max(shown, offset + len(text))
        return text[shown - offset :]
