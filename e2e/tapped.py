"""The mock agent behind ``e2e/acp_tap.py`` as an agent profile: what agentctl and the agent said, logged.

Specs that must see the ACP traffic itself (what was advertised, what an
answer put on the wire) run the mock agent through the tap.
"""

import sys
from pathlib import Path

from testing_support.bridge.profiles import create_profile

from .acp_tap import LOG_VAR

TAP = Path(__file__).with_name("acp_tap.py")
#: The tapped profile's name, as the start form lists it.
PROFILE = "Tapped mock agent"


def create_tapped_profile(server, *, workspace_id: int, log: Path, working_dir: Path) -> int:
    """A profile running the mock agent through the tap, logging its frames to ``log``; returns its primary key."""
    return create_profile(
        server,
        workspace_id=workspace_id,
        name=PROFILE,
        agent_id="mock-agent",
        command=[sys.executable, str(TAP)],
        env={LOG_VAR: str(log)},
        working_dir=str(working_dir),
    )


def start_tapped(page, prompt: str) -> None:
    """On a task page: start the tapped profile with ``prompt``."""
    page.get_by_test_id("session-start-profile").select_option(label=PROFILE)
    page.get_by_test_id("session-start-prompt").fill(prompt)
    page.get_by_test_id("session-start-submit").click()
