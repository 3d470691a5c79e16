"""D1: the order questions are presented in.

Declaration order is not trusted: Kandev's Go ACP binding decodes `properties` into
a map whose iteration order is random, so the order must be a total function of the
key set alone (`docs/decisions/mapping.md#d1-question-order`). Keys are compared as UTF-8
bytes, so every peer that implements D1 agrees with this one whatever its native
string comparison does.
"""

from __future__ import annotations

from collections.abc import Iterable

# A key is either (prefix, numbered, digit count, digits, key) or (prefix, unnumbered, 0,
# b"", key): numbered keys sort before unnumbered ones with the same prefix.
D1Key = tuple[bytes, int, int, bytes, bytes]

_NUMBERED = 0
_UNNUMBERED = 1


def _utf8(text: str) -> bytes:
    # JSON can carry lone surrogates ("\ud800"); they must order, not raise.
    return text.encode("utf-8", "surrogatepass")


def d1_key(key: str) -> D1Key:
    """The sort key of one property key.

    The trailing run of ASCII digits is compared numerically by (length without
    leading zeros, digits) rather than through `int`, so a 5,000-digit suffix still
    compares and `q_007` ties `q_7` numerically, leaving the full key to decide.
    """
    split = len(key)
    while split > 0 and "0" <= key[split - 1] <= "9":
        split -= 1
    prefix, digits = key[:split], key[split:]
    if not digits:
        return (_utf8(prefix), _UNNUMBERED, 0, b"", _utf8(key))
    significant = digits.lstrip("0")
    return (_utf8(prefix), _NUMBERED, len(significant), significant.encode("ascii"), _utf8(key))


def d1_sorted(keys: Iterable[str]) -> list[str]:
    """Keys in D1 order: `question_2` before `question_10`, `q_007` before `q_7`."""
    return sorted(keys, key=d1_key)
