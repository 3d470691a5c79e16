"""Spotting questions that ask for a credential (`docs/decisions/operator.md#secrets`).

ACP and MCP forbid asking for secrets through a form, but an MCP server may do it
anyway. Such a question is still shown, with a warning and a password-style input,
and its text is never logged. The test is on whole words so that `apiKey` and
`OPENAI_API_KEY` are flagged while `monkey` and `keyboard_layout` are not.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")

_CREDENTIAL_WORDS = frozenset(
    {
        "key",
        "keys",
        "apikey",
        "token",
        "tokens",
        "password",
        "passwords",
        "passwd",
        "passphrase",
        "secret",
        "secrets",
    }
)
# Glued compounds like "authtoken" or "dbpassword". "key" is not a suffix here
# because too many ordinary words end in it (monkey, hockey, turkey).
_CREDENTIAL_SUFFIXES = ("token", "password", "passwd", "secret")


def looks_like_credential(*texts: str | None) -> bool:
    """True when any of the texts (a property key, its title) names a credential."""
    for text in texts:
        if not text:
            continue
        for word in _WORD.findall(text):
            lowered = word.lower()
            if lowered in _CREDENTIAL_WORDS or lowered.endswith(_CREDENTIAL_SUFFIXES):
                return True
    return False
