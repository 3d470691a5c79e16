"""An ACP ``diff`` tool-call content as the lines of a unified diff.

ACP says what a file was (``oldText``, absent for a new file) and is
(``newText``); the operator reads what changed. Made once, when the agent
reports it, and stored with the tool call: a live page re-renders the tool
call on every update, and the two texts can be whole files.

The review page reads the same diffs a file at a time: numbered (a comment
names a line of the new side), a window of lines at a time, highlighted.
"""

from __future__ import annotations

import difflib
import html
import itertools
import re
from typing import Literal, TypedDict

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound

LineKind = Literal["hunk", "add", "del", "ctx"]

#: At most this many lines are kept; the rest are counted, not shown.
MAX_LINES = 2000
#: And no line longer than this many characters (a minified file is one line).
MAX_LINE_CHARS = 2000
#: A review shows a file's lines highlighted up to this many characters at a time, plain text past it.
MAX_HIGHLIGHTED_CHARS = 100_000
#: Classed spans, the theme in static/css/highlight.css (the one Markdown's code fences use).
_FORMATTER = HtmlFormatter(nowrap=True)


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


class NumberedLine(TypedDict):
    kind: LineKind
    text: str
    #: Where the line is in the old and the new text (1-based); None on the side it is not on, and for a hunk.
    old: int | None
    new: int | None


_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def numbered(lines: list[DiffLine]) -> list[NumberedLine]:
    """Each line of a diff with its line numbers, read off the hunk headers: a comment names the new side's."""
    found: list[NumberedLine] = []
    old = new = 0
    for line in lines:
        kind = line["kind"]
        if kind == "hunk":
            match = _HUNK.match(line["text"])
            if match:
                # A hunk's start is the line before its first for an empty side (",0"): the count is what advances.
                old, new = int(match[1]), int(match[2])
                old, new = (old or 1), (new or 1)
            found.append({"kind": kind, "text": line["text"], "old": None, "new": None})
            continue
        found.append(
            {
                "kind": kind,
                "text": line["text"],
                "old": old if kind != "add" else None,
                "new": new if kind != "del" else None,
            }
        )
        old += kind != "add"
        new += kind != "del"
    return found


def window[T](items: list[T], start: int, count: int) -> tuple[list[T], int | None]:
    """``count`` items from ``start``, and where the next window starts (None when these are the last)."""
    start = max(start, 0)
    shown = items[start : start + count]
    after = start + len(shown)
    return shown, (after if after < len(items) else None)


def page_bounds(total: int, per_page: int, page: int) -> tuple[int, int]:
    """The page (1-based, clamped to those there are) of ``total`` items ``per_page`` at a time, and how many pages."""
    pages = max(1, -(-total // per_page))
    return min(max(page, 1), pages), pages


def highlighted(path: str, texts: list[str]) -> list[str]:
    """Each of ``texts`` (lines of ``path``) as HTML: Pygments' classed spans when its file type is known, else escaped.

    The lines are lexed together, so a string or comment spanning several reads
    as one; a diff's lines are not one text, so now and then a token is
    coloured as if its context were different. That is all it costs: every
    character is escaped either way (Pygments escapes its tokens).
    """
    escaped = [html.escape(text) for text in texts]
    if not texts or sum(map(len, texts)) > MAX_HIGHLIGHTED_CHARS:
        return escaped
    try:
        lexer = get_lexer_for_filename(path, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return escaped
    body = highlight("\n".join(texts), lexer, _FORMATTER)
    lines = body.split("\n")
    if len(lines) == len(texts) + 1 and lines[-1] == "":
        lines.pop()  # the formatter ends its output with a line break of its own
    # One output line per input line; anything else (a lexer that eats a line) falls back to plain text.
    return lines if len(lines) == len(texts) else escaped
