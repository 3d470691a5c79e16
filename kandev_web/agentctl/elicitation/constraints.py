"""The constraints a typed form puts on one answer, and the checks that enforce them.

One set of checks serves both ends of a question's life: the mapping runs them on a
schema's `default` (a default that does not fit is dropped, never shown), and
answer validation runs them on what the operator sends. The overlay has the browser
check first, never more strictly (`kandev_web/clarifications/native_checks.py`), but
only agentctl decides.

A `pattern` is a JSON Schema (ECMA-262) regular expression written by an agent or an
MCP server, so it is untrusted: it runs on RE2, whose matching time is linear in the
input, never on Python's backtracking `re`. A pattern RE2 cannot compile (a
back-reference, a look-around), or one too long or too big to hold, cannot be bounded
and is refused: the mapping then treats the property as one it does not recognise
(`docs/decisions/mapping.md#typed-forms`).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeGuard

import re2

#: Longer patterns are refused: nothing a form needs is this long, and RE2's
#: compile time and memory grow with the pattern.
MAX_PATTERN_CHARS = 1000
#: RE2's memory budget for one compiled pattern; a pattern that needs more is refused.
PATTERN_MAX_MEM = 1 << 20


class Format(StrEnum):
    """The string formats MCP forms may name; any other is refused."""

    EMAIL = "email"
    URI = "uri"
    DATE = "date"
    DATE_TIME = "date-time"


@dataclass(frozen=True, slots=True)
class Constraints:
    """A question's constraints, as the schema gave them; None where it gave none.

    Lengths count Unicode code points, as JSON Schema does.
    """

    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: Format | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    max_items: int | None = None

    def to_wire(self) -> dict[str, object]:
        """The `constraints` object of an announced question: only what is set, in the schema's own names."""
        wire = {
            "minLength": self.min_length,
            "maxLength": self.max_length,
            "pattern": self.pattern,
            "format": None if self.format is None else self.format.value,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "minItems": self.min_items,
            "maxItems": self.max_items,
        }
        return {key: value for key, value in wire.items() if value is not None}


NO_CONSTRAINTS = Constraints()


class Violation(StrEnum):
    """Which constraint a value breaks; the values are `ProblemCode`s too."""

    TOO_SHORT = "too_short"
    TOO_LONG = "too_long"
    PATTERN_MISMATCH = "pattern_mismatch"
    FORMAT_MISMATCH = "format_mismatch"
    BELOW_MINIMUM = "below_minimum"
    ABOVE_MAXIMUM = "above_maximum"
    TOO_FEW_ITEMS = "too_few_items"
    TOO_MANY_ITEMS = "too_many_items"


def text_violations(constraints: Constraints, text: str) -> list[Violation]:
    """Every constraint the (already trimmed) text breaks."""
    found: list[Violation] = []
    if constraints.min_length is not None and len(text) < constraints.min_length:
        found.append(Violation.TOO_SHORT)
    if constraints.max_length is not None and len(text) > constraints.max_length:
        found.append(Violation.TOO_LONG)
    if constraints.pattern is not None:
        compiled = compile_pattern(constraints.pattern)
        # A pattern that cannot be compiled never reaches a question (the mapping refuses it).
        if compiled is None or compiled.search(text) is None:
            found.append(Violation.PATTERN_MISMATCH)
    if constraints.format is not None and not matches_format(constraints.format, text):
        found.append(Violation.FORMAT_MISMATCH)
    return found


def number_violations(constraints: Constraints, number: int | float) -> list[Violation]:
    found: list[Violation] = []
    if constraints.minimum is not None and number < constraints.minimum:
        found.append(Violation.BELOW_MINIMUM)
    if constraints.maximum is not None and number > constraints.maximum:
        found.append(Violation.ABOVE_MAXIMUM)
    return found


def count_violations(constraints: Constraints, count: int) -> list[Violation]:
    found: list[Violation] = []
    if constraints.min_items is not None and count < constraints.min_items:
        found.append(Violation.TOO_FEW_ITEMS)
    if constraints.max_items is not None and count > constraints.max_items:
        found.append(Violation.TOO_MANY_ITEMS)
    return found


def is_number(value: object) -> TypeGuard[int | float]:
    """A finite JSON number; `True` is no number here, whatever Python says."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def as_integer(value: int | float) -> int | None:
    """The value as an integer when it is one (JSON Schema counts `3.0` as an integer), else None."""
    if isinstance(value, int):
        return value
    return int(value) if value.is_integer() else None


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> re2._Regexp | None:
    """The pattern on RE2, or None when it cannot be bounded (refused)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return None
    options = re2.Options()
    options.max_mem = PATTERN_MAX_MEM
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None
    except (TypeError, ValueError, OverflowError):  # e.g. a lone surrogate RE2 cannot encode
        return None


# The HTML standard's own definition of a valid e-mail address, which the
# browser's <input type=email> applies too, so both ends agree.
_EMAIL = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*",
    re.ASCII,
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
# RFC 3339's date-time: a full date, a full time, and a zone; the zone is required.
_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)


def matches_format(fmt: Format, text: str) -> bool:
    match fmt:
        case Format.EMAIL:
            return _EMAIL.fullmatch(text) is not None
        case Format.URI:
            # Imported on the first URI checked: it builds RFC 3986's grammar into one large regex on import
            # (~11 ms), which every agentctl, agent and server process paid at start, nearly all for nothing.
            from rfc3986_validator import validate_rfc3986

            return validate_rfc3986(text, rule="URI") is not None
        case Format.DATE:
            return _DATE.fullmatch(text) is not None and _valid_date(text)
        case Format.DATE_TIME:
            return _valid_date_time(text)


def _valid_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _valid_date_time(text: str) -> bool:
    match = _DATE_TIME.fullmatch(text)
    if match is None or not _valid_date(match[1]):
        return False
    hour, minute, second = int(match[2]), int(match[3]), int(match[4])
    # Stricter than RFC 3339 on one point: no leap second, which few peers accept.
    if hour > 23 or minute > 59 or second > 59:
        return False
    zone = match[6]
    return zone in ("Z", "z") or (int(zone[1:3]) <= 23 and int(zone[4:6]) <= 59)
