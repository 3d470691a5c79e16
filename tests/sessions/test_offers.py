"""The agent's modes, slash commands and on/off options: kept cut down, recorded live, shown escaped, set.

Agent text is hostile until proven otherwise: unknown mode ids, huge lists,
markup and control characters are thrown at what keeps them.
"""

import pytest
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_web.board.models import TaskState
from kandev_web.sessions import events, offers, services
from kandev_web.sessions.models import TaskSession

MODES = {
    "currentModeId": "code",
    "availableModes": [
        {"id": "ask", "name": "Ask", "description": "Answer questions"},
        {"id": "code", "name": "Code", "description": "Write code"},
        {"id": "plan", "name": "Plan"},
    ],
}
VERBOSE = {"id": "verbose", "name": "Verbose answers", "type": "boolean", "currentValue": False}
MARKUP = "<img src=x onerror=alert('mode')>"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=15), children, max_size=6),
    max_leaves=40,
)


def _entries(keys: list[str]):
    """Dicts that look like the agent's entries, with any values: ids, names and the like drawn from text and junk."""
    value = st.none() | st.booleans() | st.integers() | st.text(max_size=400) | st.sampled_from(["a", "b", "a"])
    return st.lists(st.fixed_dictionaries({}, optional={key: value for key in keys}) | json_values, max_size=130)


def _clean(text: str, limit: int) -> bool:
    return isinstance(text, str) and len(text) <= limit and all(ch.isprintable() for ch in text)


@settings(max_examples=150, deadline=None)
@given(
    raw=st.fixed_dictionaries({"currentModeId": json_values, "availableModes": _entries(["id", "name", "description"])})
    | json_values
)
def test_kept_modes_are_few_unique_printable_and_current_among_them(raw):
    kept = offers.modes(raw)
    if not kept:
        return
    ids = [mode["id"] for mode in kept["available"]]
    assert 2 <= len(ids) <= offers.MAX_MODES
    assert len(set(ids)) == len(ids)
    assert kept["current"] in ids
    for mode in kept["available"]:
        assert _clean(mode["id"], offers.ID_CHARS)
        assert mode["id"]
        assert _clean(mode["name"], offers.NAME_CHARS)
        assert mode["name"]
        assert _clean(mode["description"], offers.DESCRIPTION_CHARS)
    # A switch to anything it does not offer leaves it as it is.
    assert offers.with_current_mode(kept, "not-" + "-".join(ids)) == kept


@settings(max_examples=150, deadline=None)
@given(raw=_entries(["name", "description", "input"]) | json_values)
def test_kept_commands_are_names_that_follow_a_slash(raw):
    kept = offers.commands(raw)
    names = [command["name"] for command in kept]
    assert len(names) <= offers.MAX_COMMANDS
    assert len(set(names)) == len(names)
    for command in kept:
        assert command["name"]
        assert not any(ch.isspace() or ch == "/" for ch in command["name"])
        assert _clean(command["name"], offers.NAME_CHARS)
        assert _clean(command["description"], offers.DESCRIPTION_CHARS)
        assert _clean(command["hint"], offers.NAME_CHARS)


@settings(max_examples=150, deadline=None)
@given(
    raw=st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["boolean", "select", "flag"])},
            optional={
                "id": st.text(max_size=250) | st.sampled_from(["x", "x"]),
                "name": st.text(max_size=200),
                "currentValue": json_values,
            },
        ),
        max_size=40,
    )
    | json_values
)
def test_kept_options_are_booleans_only(raw):
    kept = offers.options(raw)
    ids = [option["id"] for option in kept]
    assert len(ids) <= offers.MAX_OPTIONS
    assert len(set(ids)) == len(ids)
    for option in kept:
        assert isinstance(option["value"], bool)
        assert _clean(option["id"], offers.ID_CHARS)
        assert _clean(option["name"], offers.NAME_CHARS)


def test_what_is_kept_of_a_well_formed_offer():
    assert offers.modes(MODES) == {
        "current": "code",
        "available": [
            {"id": "ask", "name": "Ask", "description": "Answer questions"},
            {"id": "code", "name": "Code", "description": "Write code"},
            {"id": "plan", "name": "Plan", "description": ""},
        ],
    }
    assert offers.commands([{"name": "test", "description": "Run\nthe tests", "input": {"hint": "which"}}]) == [
        {"name": "test", "description": "Runthe tests", "hint": "which"}
    ]
    select = {"id": "model", "name": "Model", "type": "select", "currentValue": "a", "options": []}
    assert offers.options([select, VERBOSE]) == [
        {"id": "verbose", "name": "Verbose answers", "description": "", "value": False}
    ]


# --- Recorded on the session, live ----------------------------------------------------------------


@pytest.fixture
def session(make_task, make_session, board):
    task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
    return make_session(task, acp_session_id="acp-1")


@pytest.fixture
def composer_changes(monkeypatch):
    """The task ids whose composers were told to re-render."""
    told = []
    monkeypatch.setattr(events.live, "task_changed", lambda task_id, parts: told.append((task_id, list(parts))))
    return told


def _reloaded(session) -> TaskSession:
    return TaskSession.objects.get(pk=session.pk)


def test_the_session_new_answer_and_each_update_are_recorded_and_shown_live(session, composer_changes):
    events.record_acp_session(session.pk, "acp-1", {"session_id": "acp-1", "modes": MODES, "config_options": [VERBOSE]})
    kept = _reloaded(session)
    assert kept.modes["current"] == "code"
    assert [o["id"] for o in kept.config_options] == ["verbose"]

    composer_changes.clear()
    events.record_session_update(session.pk, {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    commands = [{"name": "review", "description": "Review"}]
    events.record_session_update(
        session.pk, {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    )
    options = [{**VERBOSE, "currentValue": True}]
    events.record_session_update(session.pk, {"sessionUpdate": "config_option_update", "configOptions": options})
    kept = _reloaded(session)
    assert kept.modes["current"] == "plan"
    assert kept.commands == [{"name": "review", "description": "Review", "hint": ""}]
    assert kept.config_options[0]["value"] is True
    assert composer_changes == [(session.task_id, ["composer"])] * 3
    assert not kept.messages.exists()  # none of it is timeline


def test_hostile_updates_change_nothing_they_should_not(session, composer_changes):
    events.record_acp_session(session.pk, "acp-1", {"modes": MODES})
    composer_changes.clear()
    events.record_session_update(session.pk, {"sessionUpdate": "current_mode_update", "currentModeId": "root"})
    events.record_session_update(session.pk, {"sessionUpdate": "current_mode_update", "currentModeId": ["code"]})
    assert _reloaded(session).modes["current"] == "code"
    assert composer_changes == []  # nothing changed, nothing re-rendered

    huge = [{"name": f"c{i}", "description": "x" * 10_000} for i in range(5_000)]
    events.record_session_update(session.pk, {"sessionUpdate": "available_commands_update", "availableCommands": huge})
    kept = _reloaded(session).commands
    assert len(kept) == offers.MAX_COMMANDS
    assert {len(c["description"]) for c in kept} == {offers.DESCRIPTION_CHARS}

    events.record_session_update(session.pk, {"sessionUpdate": "config_option_update", "configOptions": "all of them"})
    assert _reloaded(session).config_options == []


def test_markup_in_what_the_agent_offers_is_shown_as_text(session, operator_client, make_execution):
    make_execution(session)
    modes = {
        "currentModeId": "x",
        "availableModes": [{"id": "x", "name": MARKUP, "description": MARKUP}, {"id": "y", "name": "Y"}],
    }
    events.record_acp_session(session.pk, "acp-1", {"modes": modes, "config_options": [{**VERBOSE, "name": MARKUP}]})
    events.record_session_update(
        session.pk,
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "go", "description": MARKUP}]},
    )
    session.turns.update(completed_at="2026-12-03T00:00:00Z")
    html = operator_client.get(reverse("sessions:task", args=[session.task_id])).content.decode()
    assert MARKUP not in html
    assert html.count("&lt;img src=x onerror=alert(&#x27;mode&#x27;)&gt;") == 4
    assert 'data-testid="command-option" data-command="go"' in html
    assert 'data-testid="session-option" data-option-id="verbose" data-value="false"' in html


# --- Set by the operator ----------------------------------------------------------------------------


@pytest.fixture
def sent(monkeypatch):
    """What the views send agentctl, answered as the agent would."""
    requests = []

    def send(session, action, payload):
        requests.append((action, payload))
        if action == "agent.session.set_config_option":
            return {"config_options": [{**VERBOSE, "currentValue": payload["value"]}]}
        return {"success": True}

    monkeypatch.setattr(services, "_send", send)
    return requests


@pytest.fixture
def offered(session, make_execution):
    make_execution(session)
    events.record_acp_session(session.pk, "acp-1", {"modes": MODES, "config_options": [VERBOSE]})
    return session


def test_switching_the_mode_sends_it_and_shows_it(operator_client, offered, sent, composer_changes):
    response = operator_client.post(reverse("sessions:mode", args=[offered.pk]), {"mode": "plan"})
    assert response.status_code == 204
    assert sent == [("agent.session.set_mode", {"session_id": "acp-1", "mode_id": "plan"})]
    assert _reloaded(offered).modes["current"] == "plan"


def test_toggling_an_option_sends_a_boolean_and_keeps_the_agents_answer(operator_client, offered, sent):
    response = operator_client.post(
        reverse("sessions:option", args=[offered.pk]), {"option": "verbose", "value": "true"}
    )
    assert response.status_code == 204
    assert sent == [("agent.session.set_config_option", {"session_id": "acp-1", "config_id": "verbose", "value": True})]
    assert _reloaded(offered).config_options[0]["value"] is True
    # Unchecked, a checkbox sends nothing: off.
    operator_client.post(reverse("sessions:option", args=[offered.pk]), {"option": "verbose"})
    assert sent[-1][1]["value"] is False
    assert _reloaded(offered).config_options[0]["value"] is False


@pytest.mark.parametrize(
    ("url", "data", "says"),
    [
        ("sessions:mode", {"mode": "root"}, "The agent does not offer that mode (any more)."),
        ("sessions:option", {"option": "admin", "value": "true"}, "The agent does not offer that option (any more)."),
    ],
)
def test_what_the_agent_does_not_offer_is_refused_unsent(operator_client, offered, sent, url, data, says):
    response = operator_client.post(reverse(url, args=[offered.pk]), data)
    assert says in response.content.decode()
    assert sent == []


def test_a_refusal_of_the_agents_is_told_and_nothing_is_kept(operator_client, offered, monkeypatch):
    def refuse(session, action, payload):
        raise services.StreamError("the agent refused session/set_mode: Invalid params")

    monkeypatch.setattr(services, "_send", refuse)
    response = operator_client.post(reverse("sessions:mode", args=[offered.pk]), {"mode": "plan"})
    assert (
        "The agent refused the change: the agent refused session/set_mode: Invalid params" in response.content.decode()
    )
    assert _reloaded(offered).modes["current"] == "code"
