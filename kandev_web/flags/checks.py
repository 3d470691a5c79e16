import os

from django.core import checks

from .registry import FLAGS
from .resolution import parse_bool


@checks.register()
def check_flag_environment(app_configs, **kwargs):
    """A flag env var that is not a boolean is a deploy mistake worth stopping for."""
    errors = []
    for flag in FLAGS.values():
        raw = os.environ.get(flag.env_var)
        if raw is not None and parse_bool(raw) is None:
            errors.append(
                checks.Error(
                    f"{flag.env_var}={raw!r} is not a boolean.",
                    hint="Use true or false.",
                    id="flags.E001",
                )
            )
    return errors
