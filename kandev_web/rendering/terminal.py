"""A command's output, as the operator reads it in a terminal block.

Output arrives as a terminal would get it: colour and cursor escapes
included, and as long as the command ran. Escapes mean nothing in a page
(and would show as noise), so they go; only the end is kept, as a terminal's
scrollback keeps the end.
"""

from __future__ import annotations

import re

#: Characters kept of one terminal's output: its last ones.
MAX_OUTPUT_CHARS = 64_000

# ECMA-48 control sequences (CSI … final byte), operating system commands
# (OSC … BEL or ST), other two-character escapes, and control characters
# other than tab and newline. A carriage return alone goes too.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|[\x00-\x08\x0b-\x1f\x7f]"
)


def plain_output(data: str) -> str:
    """``data`` without terminal escapes or control characters, line endings as ``\\n``."""
    return _ESCAPES.sub("", data.replace("\r\n", "\n"))


def tail(text: str, limit: int | None = None) -> tuple[str, bool]:
    """The last ``limit`` (``MAX_OUTPUT_CHARS``) characters of ``text``, and whether anything was cut."""
    limit = MAX_OUTPUT_CHARS if limit is None else limit
    if len(text) <= limit:
        return text, False
    return text[-limit:], True
