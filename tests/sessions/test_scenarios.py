"""The mock agent's scenarios by name: the start form offers them, and sends the prompt that plays one."""

import json

import pytest
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agents.models import AgentProfile
from kandev_web.mock_agent import engine, mcp_steps  # noqa: F401  (mcp_steps registers its step)
from kandev_web.pages.task.forms import StartSessionForm
from kandev_web.sessions.scenarios import SCENARIOS, scenario_choices, scenario_of_prompt, scenario_prompt


def test_every_scenario_offered_is_one_the_mock_agent_plays() -> None:
    assert {s.name for s in SCENARIOS} <= set(engine.scenario_names())


def test_the_first_scenarios_offered_are_the_questions_the_permission_and_the_edit() -> None:
    with translation.override("en"):
        labels = [str(label) for _, label in scenario_choices()]
    assert labels[1:3] == ["Ask a structured question", "Ask several questions"]
    assert {"Request a permission", "Edit a file"} <= set(labels)
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_a_scenarios_prompt_plays_it_and_names_it_back(scenario) -> None:
    prompt = scenario_prompt(scenario.name)
    assert prompt == f"/e2e:{scenario.name}"
    assert engine.load_scenario(scenario.name)
    assert scenario_of_prompt(prompt) == scenario


@given(st.text())
def test_any_other_prompt_names_no_scenario(prompt) -> None:
    offered = {scenario_prompt(s.name) for s in SCENARIOS}
    assert (scenario_of_prompt(prompt) is not None) == (prompt in offered)


@pytest.fixture
def profiles(workspace):
    mock = AgentProfile.objects.create(workspace=workspace, name="A mock", agent_id="mock-agent", command=["x"])
    claude = AgentProfile.objects.create(workspace=workspace, name="Claude", agent_id="claude-acp", command=["y"])
    return mock, claude


def test_with_the_mock_agent_a_scenario_is_sent_as_its_prompt_even_with_no_prompt_written(make_task, profiles):
    mock, _ = profiles
    form = StartSessionForm({"profile": mock.pk, "prompt": "", "scenario": "elicit-single"}, task=make_task())
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prompt"] == "/e2e:elicit-single"


def test_for_another_agent_a_scenario_is_ignored_and_the_prompt_sent_as_written(make_task, profiles):
    _, claude = profiles
    form = StartSessionForm({"profile": claude.pk, "prompt": "Fix it", "scenario": "elicit-single"}, task=make_task())
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prompt"] == "Fix it"


def test_no_scenario_sends_the_prompt_as_written(make_task, profiles):
    mock, _ = profiles
    form = StartSessionForm({"profile": mock.pk, "prompt": "/e2e:crash", "scenario": ""}, task=make_task())
    assert form.is_valid(), form.errors
    assert form.cleaned_data["prompt"] == "/e2e:crash"


def test_a_scenario_not_offered_is_refused(make_task, profiles):
    mock, _ = profiles
    form = StartSessionForm({"profile": mock.pk, "prompt": "", "scenario": "../reply"}, task=make_task())
    assert not form.is_valid()
    assert "scenario" in form.errors


def test_the_agent_picker_marks_the_profiles_that_play_scenarios(make_task, profiles):
    mock, claude = profiles
    html = str(StartSessionForm(task=make_task())["profile"])
    assert f'<option value="{mock.pk}" data-scenarios="true">' in html
    assert f'<option value="{claude.pk}" data-scenarios="false">' in html


#: What a first-time visitor must not see the demo send: the test strings of the markup-is-inert specs.
HOSTILE = ("onerror", "onload", "javascript:", "<script", "<img", "<svg", "alert(")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_an_offered_scenario_sends_no_hostile_markup(scenario) -> None:
    sent = json.dumps(engine.load_scenario(scenario.name), ensure_ascii=False).lower()
    assert [marker for marker in HOSTILE if marker in sent] == []


@pytest.mark.parametrize("name", ["rich-timeline", "hostile-markup", "crash-stderr"])
def test_the_hostile_scenarios_are_kept_for_the_tests_and_not_offered(name) -> None:
    assert "onerror" in json.dumps(engine.load_scenario(name))
    assert name not in {s.name for s in SCENARIOS}
    assert scenario_of_prompt(f"/e2e:{name}") is None
