"""A typed form's constraints as the browser's own: its attributes, and what the page may say before sending.

agentctl alone decides whether an answer fits (``docs/decisions/mapping.md#typed-forms``);
the overlay checks first so that the operator hears of a slip at once, and it
does so with the browser's Constraint Validation API, not with rules of its own.
Where HTML's rules differ from agentctl's, the page may be laxer than agentctl,
never stricter: an answer agentctl would take always leaves. So:

- lengths: ``minlength`` is native (the browser counts UTF-16 code units of the
  untrimmed value, never fewer than agentctl's code points of the trimmed
  text); ``maxlength`` is not rendered, since it would stop an answer agentctl
  takes, and ``static/js/clarification.js`` counts code points of the trimmed
  text against it instead;
- an integer's bounds are rounded inwards (``min=1`` for ``minimum: 0.5``), the
  same integers, and ``step=1`` then counts from a whole number;
- a ``pattern`` is searched, not anchored, and RE2's, not ECMAScript's: it is
  rendered only when :func:`html_pattern` can write it so that the browser
  finds exactly what RE2 finds, else it is left to agentctl;
- ``type=url`` parses by the URL Standard, which refuses some RFC 3986 URIs
  agentctl takes (a port over 65535, a dotted host that is no IPv4 address),
  so a URL the browser calls malformed is still sent, for agentctl to judge.

Pure: no Django, so the rules can be tested on their own; the problem codes are
agentctl's own (``ProblemCode``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kandev_web.agentctl.elicitation.answers import ProblemCode as Code
from kandev_web.agentctl.elicitation.constraints import Format

#: The formats whose control the browser checks exactly as agentctl does (``uri`` is not one, see above).
CHECKED_FORMATS = frozenset({Format.EMAIL, Format.DATE, Format.DATE_TIME})

#: Characters that may, and in an ECMAScript ``v``-flag class sometimes must, be escaped inside a class.
_CLASS_ESCAPABLE = frozenset("^$\\.*+?()[]{}|/&-!#%,:;<=>@`~")
#: Escapes RE2 and the browser both read, each its own way: RE2's ``\s`` is ASCII and the browser's Unicode,
#: RE2 finds ``\B`` between the bytes of one UTF-8 character, their Unicode property tables differ in version.
_DIFFERING_ESCAPES = frozenset("sSpPB")
_CLASS_ESCAPES = frozenset("dDwW")
_HEX = frozenset("0123456789abcdefABCDEF")


def html_number(value: int | float) -> str:
    """A bound as HTML reads a number: never localised (a German page would write 0,5)."""
    return str(value)


def number_attributes(kind: str, constraints: Mapping) -> tuple[tuple[str, str], ...]:
    """``min`` and ``max`` of a number field: an integer's bounds rounded inwards to the same integers."""
    low, high = constraints.get("minimum"), constraints.get("maximum")
    if kind == "integer":
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
    return tuple((name, html_number(value)) for name, value in (("min", low), ("max", high)) if value is not None)


def text_attributes(constraints: Mapping) -> tuple[tuple[str, str], ...]:
    """``minlength``, and the ``pattern`` when the browser can search it as RE2 does."""
    attributes = []
    if constraints.get("minLength") is not None:
        attributes.append(("minlength", str(constraints["minLength"])))
    pattern = constraints.get("pattern")
    translated = html_pattern(pattern) if isinstance(pattern, str) and pattern else None
    if translated is not None:
        attributes.append(("pattern", translated))
    return tuple(attributes)


def client_problems(question: Mapping, *, typed: bool) -> tuple[tuple[Code, object], ...]:
    """The problems the page may find in an answer to ``question``, each as (code, limit).

    ``typed`` says whether the question has a field to type into. Each code is
    the one agentctl reports for the same fault, and its limit the one it would
    name, so the page says what agentctl would say. A fault missing here is
    agentctl's alone to find.
    """
    kind = question.get("kind")
    c = question.get("constraints") or {}
    found: list[tuple[Code, object]] = []
    if question.get("required"):
        found.append((Code.REQUIRED_UNANSWERED, None))
    if typed and kind not in ("number", "integer"):
        found.append((Code.TEXT_TOO_LONG, None))
    if kind in ("number", "integer"):
        found.append((Code.WRONG_TYPE, kind))
        if kind == "integer":
            found.append((Code.NOT_AN_INTEGER, None))
        found += _limits(c, ("minimum", Code.BELOW_MINIMUM), ("maximum", Code.ABOVE_MAXIMUM))
    if kind == "text" and typed:
        found += _limits(c, ("minLength", Code.TOO_SHORT), ("maxLength", Code.TOO_LONG))
        if isinstance(c.get("pattern"), str) and c["pattern"] and html_pattern(c["pattern"]) is not None:
            found.append((Code.PATTERN_MISMATCH, c["pattern"]))
        if c.get("format") in CHECKED_FORMATS:
            found.append((Code.FORMAT_MISMATCH, c["format"]))
    if kind == "multi":
        found += _limits(c, ("minItems", Code.TOO_FEW_ITEMS), ("maxItems", Code.TOO_MANY_ITEMS))
    return tuple(found)


def _limits(constraints: Mapping, *pairs: tuple[str, Code]) -> list[tuple[Code, object]]:
    return [(code, constraints[key]) for key, code in pairs if constraints.get(key) is not None]


def html_pattern(pattern: str) -> str | None:
    """``pattern`` (RE2, searched) as an HTML ``pattern`` attribute with the same matches; None when it cannot be.

    The browser anchors the attribute and compiles it with the ``v`` flag, so
    the search is written out (``[\\s\\S]*(?:…)[\\s\\S]*``), RE2's ``.`` (any
    character but a newline) becomes ``[^\\n]``, and a class's literal
    punctuation is escaped, as the ``v`` flag wants (``[a-z-]`` becomes
    ``[a-z\\-]``). Anything read differently by the two (``\\s``, ``\\B``,
    ``\\p{…}``, a POSIX class, a flag group) gives None. A pattern the browser still
    cannot compile is ignored by it: the page is laxer there, never stricter.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n or pattern[i + 1] in _DIFFERING_ESCAPES:
                return None
            out.append(pattern[i : i + 2])
            i += 2
        elif c == ".":
            out.append("[^\\n]")
            i += 1
        elif c == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            return None
        elif c == "[":
            end = _class(pattern, i, out)
            if end is None:
                return None
            i = end
        else:
            out.append(c)
            i += 1
    return "[\\s\\S]*(?:" + "".join(out) + ")[\\s\\S]*"


def _class(pattern: str, start: int, out: list[str]) -> int | None:
    """Write the class opening at ``start`` in ``v``-flag syntax; the index after it, or None."""
    i, n = start + 1, len(pattern)
    out.append("[")
    if pattern.startswith("^", i):
        out.append("^")
        i += 1
    first = True
    while i < n:
        # RE2 reads a ']' first in a class as a literal one.
        if pattern[i] == "]" and not first:
            out.append("]")
            return i + 1
        first = False
        low = _class_atom(pattern, i)
        if low is None:
            return None
        text, i = low
        ranged = pattern.startswith("-", i) and i + 1 < n and pattern[i + 1] != "]"
        if not ranged:
            out.append(text)
            continue
        high = _class_atom(pattern, i + 1)
        if high is None or text[1:] in _CLASS_ESCAPES or high[0][1:] in _CLASS_ESCAPES:
            return None  # RE2 reads '\d-z' as three items, the browser as an error or a range
        out.append(f"{text}-{high[0]}")
        i = high[1]
    return None


def _class_atom(pattern: str, i: int) -> tuple[str, int] | None:
    """One character of a class (or a class escape) at ``i``, written for the ``v`` flag, and the index after it."""
    c = pattern[i]
    if c == "[":
        return None  # a POSIX class in RE2, a nested class in the browser
    if c != "\\":
        return ("\\" + c if c in _CLASS_ESCAPABLE else c), i + 1
    if i + 1 >= len(pattern) or pattern[i + 1] in _DIFFERING_ESCAPES:
        return None
    if pattern[i + 1] == "x":
        digits = pattern[i + 2 : i + 4]
        if len(digits) != 2 or not set(digits) <= _HEX:
            return None
        return pattern[i : i + 4], i + 4
    return pattern[i : i + 2], i + 2
