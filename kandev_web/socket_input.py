"""Reading what a browser sends on a live socket: JSON frames, and numbers in a page's query string.

Every live socket reads its input through here, because three kinds of
hostile input get past the plain parsers and only fail later, inside a
consumer, which Channels answers by closing the socket with 1011:

- JSON nested deeper than the parser recurses raises ``RecursionError``,
  which is no ``ValueError``: such a frame is refused as not JSON;
- JSON's ``\\ud800`` escape gives a string a lone surrogate, which UTF-8
  cannot encode, so the database refuses it and so does Daphne when a reply
  echoes it: it becomes U+FFFD, as all text does at the doors it comes in by
  (``storable``, ``docs/decisions/across-processes.md#unstorable-characters``);
- an integer beyond a database column (SQLite's and PostgreSQL's bigint)
  raises ``OverflowError`` when compared with one: it names nothing.

Pure functions, no Django: the caller says what a refusal means to the operator.
"""

import json

from kandev_web.storable import storable

#: The largest integer an id or position column holds; a number beyond it names nothing.
MAX_COLUMN_INT = 2**63 - 1


class UnreadableFrame(ValueError):
    """A frame that is not one JSON value within the size limit; ``reason`` says which way."""

    TOO_LARGE = "too_large"
    NOT_JSON = "not_json"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def json_frame(text: str, *, max_bytes: int) -> object:
    """The JSON value ``text`` holds, its text made storable; raise ``UnreadableFrame``.

    ``max_bytes`` bounds ``text`` in UTF-8.
    """
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise UnreadableFrame(UnreadableFrame.TOO_LARGE)
    try:
        return storable(json.loads(text))
    except (ValueError, RecursionError):
        raise UnreadableFrame(UnreadableFrame.NOT_JSON) from None


def column_int(text: str) -> int:
    """``text`` as an integer a database column can hold; ``ValueError`` if it is not one."""
    number = int(text)
    if not -MAX_COLUMN_INT <= number <= MAX_COLUMN_INT:
        raise ValueError(f"{text!r} is beyond any column")
    return number
