"""Reading and changing runtime flags.

Agent executions read :func:`runtime_flags` when they start, which is how a
flag crosses into agentctl (``docs/decisions/across-processes.md#f5-the-flag-crosses-processes``).
"""

import os

from django.conf import settings

from .models import FlagOverride
from .registry import FLAGS, FlagDefinition
from .resolution import FlagState, resolve


class FlagNotFound(LookupError):
    pass


class FlagLocked(Exception):
    """The flag's env variable is set, so the stored override cannot change it."""


def _overrides() -> dict[str, bool]:
    return dict(FlagOverride.objects.filter(key__in=FLAGS).values_list("key", "value"))


def _state(definition: FlagDefinition, override: bool | None) -> FlagState:
    return resolve(definition, environ=os.environ, override=override, profile=settings.KANDEV_PROFILE)


def flag_states() -> list[FlagState]:
    overrides = _overrides()
    return [_state(flag, overrides.get(key)) for key, flag in FLAGS.items()]


def flag_state(key: str) -> FlagState:
    try:
        definition = FLAGS[key]
    except KeyError:
        raise FlagNotFound(key) from None
    override = FlagOverride.objects.filter(key=key).values_list("value", flat=True).first()
    return _state(definition, override)


def runtime_flags() -> dict[str, bool]:
    """Every flag's value right now, as agentctl's ``agent.initialize`` takes it."""
    return {state.definition.key: state.effective_value for state in flag_states()}


def set_override(key: str, value: bool | None, *, user=None) -> FlagState:
    state = flag_state(key)
    if state.env_locked or not state.definition.mutable:
        raise FlagLocked(key)
    if value is None:
        FlagOverride.objects.filter(key=key).delete()
    else:
        FlagOverride.objects.update_or_create(key=key, defaults={"value": value, "updated_by": user})
    return flag_state(key)
