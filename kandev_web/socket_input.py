"""Reading what a browser sends on a live socket: JSON frames, and numbers in a page's query string.

Every live socket reads its input through here, because three kinds of
hostile input get past the plain parsers and only fail later, inside a
consumer, which Channels answers by closing the socket with 1011:

- JSON nested deeper than the parser recurses raises ``RecursionError``,
  which is no ``ValueError``;
- JSON's ``\\ud800`` escape gives a string a lone surrogate, which UTF-8
  cannot encode: the database refuses it, and so does Daphne when a reply
  echoes it;
- an integer beyond a database column (SQLite's and PostgreSQL's bigint)
  raises ``OverflowError`` when compared with one.

Pure functions, no Django: the caller says what a refusal means to the operator.
"""

import json

#: The largest integer an id or position column holds; a number beyond it names nothing.
MAX_COLUMN_INT = 2**63 - 1


class UnreadableFrame(ValueError):
    """A frame that is not one JSON value of storable text; ``reason`` says which way."""

    TOO_LARGE = "too_large"
    NOT_JSON = "not_json"
    NOT_TEXT = "not_text"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def json_frame(text: str, *, max_bytes: int) -> object:
    """The JSON value ``text`` holds, no larger than ``max_bytes`` in UTF-8; raise ``UnreadableFrame``."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise UnreadableFrame(UnreadableFrame.TOO_LARGE)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise UnreadableFrame(UnreadableFrame.NOT_JSON) from None
    if not _encodable(value):
        raise UnreadableFrame(UnreadableFrame.NOT_TEXT)
    return value


def _encodable(value: object) -> bool:
    """Whether every string in ``value``, keys included, is text UTF-8 can carry (no lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def column_int(text: str) -> int:
    """``text`` as an integer a database column can hold; ``ValueError`` if it is not one."""
    number = int(text)
    if not -MAX_COLUMN_INT <= number <= MAX_COLUMN_INT:
        raise ValueError(f"{text!r} is beyond any column")
    return number
