"""Text from agents and operators, made storable in every database kandev-web runs on.

An agent's text is whatever its tools read: ``cat`` of a binary file puts a
NUL in a tool result, and any program that speaks JSON can send a lone
surrogate (``"\\ud800"``). SQLite keeps a NUL, PostgreSQL refuses it in
``text`` and in ``jsonb`` (``\\u0000``), and neither can take a lone surrogate
(it has no UTF-8). A row that cannot be written is lost: a tool call stuck "in
progress", an answer that is a 500. So everything that reaches a row from
outside passes through here first, at the edges where it enters:

- agentctl's frames, as the web app's stream client decodes them
  (``agentctl/stream_client.py``): session updates, tool calls, permission
  requests, elicitations and their answers, an agent's stderr tail;
- ``ask_user_question_kandev``'s arguments (``clarifications/mcp.py``);
- an operator's answers and skip reasons (``clarifications/answering.py``),
  and the text fields of forms (``kandev_web/forms.py``).

Each character neither database can take becomes U+FFFD, Unicode's
replacement character, which is also the mark: it shows as "�" wherever the
text is read, saying that a character was here and could not be kept
(``docs/decisions/across-processes.md#unstorable-characters``). A number JSON cannot hold
(NaN, infinities, which PostgreSQL's ``jsonb`` refuses) becomes ``null``, as
in a browser's ``JSON.stringify``.

Pure functions, no Django: agentctl uses them too.
"""

from __future__ import annotations

import math
import re
from typing import Any

REPLACEMENT = "\ufffd"

#: NUL, and surrogates: in a ``str`` every surrogate is a lone one, since a
#: pair decodes to the one character it encodes.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` with each character a database refuses replaced by U+FFFD; ``text`` itself when there is none."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def storable(value: Any) -> Any:
    """A JSON value (what ``json.loads`` returns) with every string in it, keys too, made storable.

    Returns ``value`` itself when nothing in it needed a change, so the
    common case costs a walk and no copy. Tuples become lists, as JSON
    has no tuple. Two keys that differ only in replaced characters become
    one key; the later value wins, as in a JSON object with a repeated key.
    """
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        pairs = [(storable(key), storable(item)) for key, item in value.items()]
        if all(new[0] is old[0] and new[1] is old[1] for new, old in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, (list, tuple)):
        items = [storable(item) for item in value]
        if isinstance(value, list) and all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value


def unstorable_count(value: Any) -> int:
    """How many characters (and numbers) :func:`storable` replaces in ``value``: for a log line, never the text."""
    if isinstance(value, str):
        return len(_UNSTORABLE.findall(value))
    if isinstance(value, float):
        return 0 if math.isfinite(value) else 1
    if isinstance(value, dict):
        return sum(unstorable_count(key) + unstorable_count(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return sum(unstorable_count(item) for item in value)
    return 0
