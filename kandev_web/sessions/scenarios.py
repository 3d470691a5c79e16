"""The mock agent's scenarios an operator can start by name, and the prompt that plays each.

The mock agent (no Django) knows scenarios by file name and plays one when
its prompt is ``/e2e:<name>``; the operator-facing names, translated, are
kept here, in the web layer, and nowhere else. The tests and e2e specs keep
typing ``/e2e:`` prompts; the task page's start form offers these instead.
"""

from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

#: The ``agent_id`` of a profile that runs ``kandev_web.mock_agent``: its start form offers the scenarios.
MOCK_AGENT_ID = "mock-agent"

#: How the mock agent is told which scenario to play (``kandev_web/mock_agent/agent.py``).
SCENARIO_PROMPT_PREFIX = "/e2e:"


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str | Promise


#: In the order the start form lists them: what the product is for first. Only ordinary work: the
#: scenarios that send hostile markup (rich-timeline, hostile-markup, crash-stderr) are for the tests, played by prompt.
SCENARIOS = (
    Scenario("elicit-single", _("Ask a structured question")),
    Scenario("elicit-two", _("Ask several questions")),
    Scenario("elicit-typed", _("Ask for a typed form (numbers, dates, yes/no)")),
    Scenario("clarification", _("Ask through Kandev's question tool")),
    Scenario("permission-flow", _("Request a permission")),
    Scenario("edit-file", _("Edit a file")),
    Scenario("tool-calls", _("Make a plan and call tools")),
    Scenario("fix-a-bug", _("Fix a bug: a plan, a diff and a test run")),
    Scenario("long-stream", _("Stream a long answer (time to cancel it)")),
    Scenario("session-settings", _("Say which mode and options it works with")),
    Scenario("crash", _("Crash")),
)

_BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


def offers_scenarios(agent_id: str) -> bool:
    """Whether a profile with this ``agent_id`` runs the mock agent, and so plays scenarios."""
    return agent_id == MOCK_AGENT_ID


def scenario_choices() -> list[tuple[str, str | Promise]]:
    """The start form's choices: none (the prompt is sent as written), then each scenario by name."""
    return [("", _("None: reply to the prompt")), *((s.name, s.label) for s in SCENARIOS)]


def scenario_prompt(name: str) -> str:
    """The prompt that makes the mock agent play ``name``; ``KeyError`` for a name not offered here."""
    return SCENARIO_PROMPT_PREFIX + _BY_NAME[name].name


def scenario_of_prompt(prompt: str) -> Scenario | None:
    """The offered scenario a prompt plays, for the timeline to name it; None for any other prompt."""
    if not prompt.startswith(SCENARIO_PROMPT_PREFIX):
        return None
    return _BY_NAME.get(prompt.removeprefix(SCENARIO_PROMPT_PREFIX))
