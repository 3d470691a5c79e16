"""This app's secrets at rest, sealed again with the first key (``manage.py rotate_secrets``): agentctl tokens."""

from kandev_web.agents.models import reseal
from kandev_web.secret_box import SecretBox

from .models import AgentExecution


def rotate(box: SecretBox) -> tuple[int, list[str]]:
    """Seal every agentctl token again with ``box``'s first key: how many, and those no key opens."""
    return reseal(AgentExecution, "token")
