"""Secret values kept out of everything agentctl says: its log, the stream, an agent's stderr tail.

The web app names which of the agent's environment variables are secrets in
``KANDEV_AGENTCTL_SECRET_NAMES`` (names only, comma-separated); their values
are in agentctl's environment, for the agent. An agent that echoes its API key
(in a message, a tool call's output, a traceback on stderr) must not get it
onto the task page, into the database or into a log, so agentctl replaces every
occurrence of those values with :data:`MASK` before a frame leaves it and
before a log line is written (docs/decisions/operator.md#secrets-at-rest).

Values shorter than :data:`MIN_LENGTH` are not scrubbed: masking them would
garble ordinary words, and they are no secret worth the name.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAMES_VAR = "KANDEV_AGENTCTL_SECRET_NAMES"  # noqa: S105 - the variable's name, not a secret
MASK = "[secret]"
MIN_LENGTH = 6


class Scrubber:
    """Replaces known secret values in text and in JSON-like values; it never shows them in its ``repr``."""

    def __init__(self, values: Iterable[str]) -> None:
        # Longest first, so a secret containing another is masked whole.
        kept = sorted({value for value in values if len(value) >= MIN_LENGTH}, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(value) for value in kept)) if kept else None

    def __repr__(self) -> str:
        return "<Scrubber>"

    def __bool__(self) -> bool:
        return self._pattern is not None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Scrubber:
        """The values of the variables ``KANDEV_AGENTCTL_SECRET_NAMES`` names, read from ``environ``."""
        names = [name.strip() for name in environ.get(SECRET_NAMES_VAR, "").split(",")]
        values = [environ[name] for name in names if name and name in environ]
        return cls([*values, *(part for value in values for part in _json_strings(value))])

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(MASK, text)

    def value(self, value: Any) -> Any:
        """``value`` (a frame's payload) with every string in it scrubbed, keys included."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key) if isinstance(key, str) else key: self.value(item) for key, item in value.items()}
        return value


def _json_strings(value: str) -> list[str]:
    """The string values of a secret that is a JSON object (the model gateway's headers): each is masked too."""
    if not value.startswith("{"):
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    return [item for item in parsed.values() if isinstance(item, str)] if isinstance(parsed, dict) else []


class ScrubbingFormatter(logging.Formatter):
    """A log formatter whose every line, traceback included, is scrubbed.

    ``fmt`` is a format string, or another formatter (the JSON one) to scrub the lines of.
    """

    def __init__(self, fmt: str | logging.Formatter, scrubber: Scrubber) -> None:
        super().__init__(fmt if isinstance(fmt, str) else None)
        self._inner = fmt if isinstance(fmt, logging.Formatter) else None
        self._scrubber = scrubber

    def format(self, record: logging.LogRecord) -> str:
        line = self._inner.format(record) if self._inner is not None else super().format(record)
        return self._scrubber.text(line)
