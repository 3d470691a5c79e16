"""How a flag's effective value is chosen: env > stored override > profile > default.

Pure functions over plain values, so the precedence can be tested without a
database or a process environment.
"""

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

from .registry import FlagDefinition

PROFILES_FILE = Path(__file__).with_name("profiles.toml")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class Source(StrEnum):
    ENV = "env"
    OVERRIDE = "override"
    PROFILE = "profile"
    DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class FlagState:
    definition: FlagDefinition
    effective_value: bool
    default_value: bool
    override_value: bool | None
    source: Source
    env_locked: bool
    requires_restart_to_apply: bool


def parse_bool(raw: str) -> bool | None:
    """Read a boolean the way operators write one; ``None`` when it is not one."""
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


@cache
def profile_values() -> dict[str, dict[str, str]]:
    """Each flag's value per profile, from ``profiles.toml`` (TOML, read by the standard library's tomllib)."""
    with PROFILES_FILE.open("rb") as fh:
        return tomllib.load(fh)


def resolve(
    definition: FlagDefinition,
    *,
    environ: Mapping[str, str],
    override: bool | None,
    profile: str,
    profiles: Mapping[str, Mapping[str, str]] | None = None,
) -> FlagState:
    """Resolve one flag.

    An env value that is not a boolean is ignored here and reported by the
    system check, so a typo never silently flips a flag on.
    """
    profiles = profile_values() if profiles is None else profiles
    profile_raw = profiles.get(definition.key, {}).get(profile)
    profile_value = parse_bool(str(profile_raw)) if profile_raw is not None else None
    default_value = definition.default if profile_value is None else profile_value

    env_value = parse_bool(environ[definition.env_var]) if definition.env_var in environ else None
    if env_value is not None:
        value, source = env_value, Source.ENV
    elif override is not None:
        value, source = override, Source.OVERRIDE
    elif profile_value is not None:
        value, source = profile_value, Source.PROFILE
    else:
        value, source = definition.default, Source.DEFAULT

    return FlagState(
        definition=definition,
        effective_value=value,
        default_value=default_value,
        override_value=override,
        source=source,
        env_locked=env_value is not None,
        # The web app resolves flags when it starts an agent execution (F5), so a
        # change reaches executions started afterwards; running ones keep theirs.
        requires_restart_to_apply=definition.restart_required,
    )
