"""This app's secrets at rest, sealed again with the first key (``manage.py rotate_secrets``): push tokens."""

from kandev_web.agents.models import reseal
from kandev_web.secret_box import SecretBox

from .models import Repository


def rotate(box: SecretBox) -> tuple[int, list[str]]:
    """Seal every repository's push token again with the first key: how many, and those no key opens."""
    return reseal(Repository, "push_token")
