"""Telling whether two pieces of agent text say the same thing, so the operator reads it once.

An elicitation's prompt falls back to its message, then to its title
(docs/decisions/mapping.md#d10-empty-enums-and-the-prompt-chain), so the overlay would
otherwise show one sentence two or three times over.
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")
#: What a sentence may end with without saying anything more.
_TRAILING = " \t\n.:;!?…"


def _gist(text: str) -> str:
    return _SPACE.sub(" ", text).strip(_TRAILING).casefold()


def says_the_same(a: str | None, b: str | None) -> bool:
    """Whether ``a`` and ``b`` differ only in case, spacing or final punctuation (two empty texts do not)."""
    gist = _gist(a or "")
    return bool(gist) and gist == _gist(b or "")
