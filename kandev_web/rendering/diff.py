"""An ACP ``diff`` tool-call content as the lines of a unified diff.

ACP says what a file was (``oldText``, absent for a new file) and is
(``newText``); the operator reads what changed. Made once, when the agent
reports it, and stored with the tool call: a live page re-renders the tool
call on every update, and the two texts can be whole files.
"""

from __future__ import annotations

import difflib
import itertools
from typing import Literal, TypedDict

LineKind = Literal["hunk", "add", "del", "ctx"]

#: At most this many lines are kept; the rest are counted, not shown.
MAX_LINES = 2000
#: And no line longer than this many characters (a minified file is one line).
MAX_LINE_CHARS = 2000


class DiffLine(TypedDict):
    kind: LineKind
    text: str


class FileDiff(TypedDict):
    path: str
    #: Where the change came from: ``a/<path>``, or ``/dev/null`` for a new file.
    old_path: str
    new_path: str
    lines: list[DiffLine]
    #: How many lines were left out past ``MAX_LINES``.
    omitted: int


_KINDS: dict[str, LineKind] = {"@": "hunk", "+": "add", "-": "del", " ": "ctx"}


def file_diff(path: str, old_text: str | None, new_text: str, *, context: int = 3) -> FileDiff:
    """The unified diff from ``old_text`` (``None``: a new file) to ``new_text``, ``context`` lines around changes."""
    old_lines = (old_text or "").splitlines()
    new_lines = new_text.splitlines()
    lines: list[DiffLine] = []
    omitted = 0
    diff = difflib.unified_diff(old_lines, new_lines, lineterm="", n=context)
    # The first two lines are the file headers, which old_path and new_path say.
    for raw in itertools.islice(diff, 2, None):
        if len(lines) >= MAX_LINES:
            omitted += 1
            continue
        kind = _KINDS[raw[0]]
        text = raw if kind == "hunk" else raw[1:]
        lines.append({"kind": kind, "text": text[:MAX_LINE_CHARS]})
    return {
        "path": path,
        "old_path": f"a/{path}" if old_text is not None else "/dev/null",
        "new_path": f"b/{path}",
        "lines": lines,
        "omitted": omitted,
    }
