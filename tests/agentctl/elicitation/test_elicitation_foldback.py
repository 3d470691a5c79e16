"""What the bridge makes of the responses we build.

The fixtures record, per bridge version, what `applyAskElicitationResponse` hands the
model (`apply_responses*.json`), what an MCP server receives (`mcp_elicit_results.json`)
and what the refusal dialog concludes (`refusal_fallback.json`) for given responses.
Each test here takes an operator's choice, builds our response, and checks against
the fixture that the bridge folds it back to what the operator chose; or, where we
deliberately send something other than the fixture's response, that the fixture
shows why.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import (
    MappedForm,
    build_response,
    cancel_response,
    map_elicitation,
    normalise,
    validate_answers,
)

Load = Callable[[str, str], Any]

SKIP = "skip"
CANCEL = "cancel"
Choice = list[dict[str, Any]] | str

# Fixture case -> (the operator's gesture, what the model should be told, by question index).
REACHABLE: dict[str, tuple[Choice, dict[int, str]]] = {
    "accept_selections": (
        [
            {"question_id": "question_0", "selected_options": ["Postgres"]},
            {"question_id": "question_1", "selected_options": ["dev", "prod"]},
        ],
        {0: "Postgres", 1: "dev, prod"},
    ),
    "accept_custom_only": ([{"question_id": "question_0", "custom_text": "MySQL"}], {0: "MySQL"}),
    "accept_partial_second_only": ([{"question_id": "question_1", "selected_options": ["staging"]}], {1: "staging"}),
    "accept_empty_content": ([], {}),
    "accept_with_meta": ([{"question_id": "question_0", "selected_options": ["SQLite"]}], {0: "SQLite"}),
    "decline": (SKIP, {}),
    "cancel": (CANCEL, {}),
}

# Fixture case -> the operator's gesture for which we send something else on purpose.
DIVERGENT: dict[str, tuple[Choice, dict[str, Any]]] = {
    "accept_custom_trim": (
        [
            {"question_id": "question_0", "selected_options": ["Postgres"], "custom_text": " CockroachDB "},
            {"question_id": "question_1", "selected_options": ["dev"]},
        ],
        {"question_0_custom": "CockroachDB", "question_1": ["dev"]},
    ),
    "accept_custom_whitespace_only": (
        [{"question_id": "question_0", "selected_options": ["SQLite"], "custom_text": "   "}],
        {"question_0": "SQLite"},
    ),
    "accept_custom_on_multiselect": (
        [{"question_id": "question_1", "selected_options": ["dev"], "custom_text": "qa"}],
        {"question_1_custom": "qa"},
    ),
    "accept_multiselect_click_order": (
        [{"question_id": "question_1", "selected_options": ["prod", "dev"]}],
        {"question_1": ["dev", "prod"]},
    ),
}

# Responses no operator gesture can make us send: each one is a trap in the fold-back.
UNREACHABLE = {
    "accept_no_content",
    "accept_null_content",
    "accept_empty_string",
    "accept_empty_array",
    "accept_unknown_keys",
    "accept_label_not_in_enum",
    "accept_number_value",
    "accept_boolean_value",
    "accept_malformed_nested_object",
    "accept_malformed_number_array",
    "accept_multiselect_as_string",
    "accept_singleselect_as_array",
    "accept_one_null_value_voids_all",
    "accept_one_nested_value_voids_all",
    "decline_with_content",
    "unknown_action",
    "missing_action",
}

APPLY_FILES = [
    ("0.65.0", "apply_responses.json"),
    ("0.101.0", "apply_responses.json"),
    ("0.101.0", "apply_responses_reportUnanswered.json"),
]
RESULT_FILES = [*APPLY_FILES, ("0.65.0", "mcp_elicit_results.json"), ("0.101.0", "mcp_elicit_results.json")]


def two_question_form(load_fixture: Load, version: str) -> MappedForm:
    """The form the fold-back fixtures were recorded against."""
    form = map_elicitation(load_fixture(version, "ask_two_request.json"))
    assert isinstance(form, MappedForm)
    return form


def act(form: MappedForm, choice: Choice) -> dict[str, object]:
    if choice == CANCEL:
        return cancel_response()
    if choice == SKIP:
        return build_response(form, None, rejected=True)
    return build_response(form, normalise(form, choice), rejected=False)


def without_meta(response: dict[str, Any]) -> dict[str, Any]:
    """A fixture response minus `_meta`, which we never send and the bridge drops."""
    return {key: value for key, value in response.items() if key != "_meta"}


def told_to_model(result: dict[str, Any]) -> dict[str, str] | None:
    """The answers the model sees, or None when the tool call was aborted."""
    return result["updatedInput"]["answers"] if result["action"] == "answered" else None


@pytest.mark.parametrize(("version", "name"), RESULT_FILES)
def test_every_recorded_case_is_classified(load_fixture: Load, version: str, name: str) -> None:
    cases = set(load_fixture(version, name))

    assert cases <= set(REACHABLE) | set(DIVERGENT) | UNREACHABLE
    assert not (set(REACHABLE) & set(DIVERGENT))
    assert not ((set(REACHABLE) | set(DIVERGENT)) & UNREACHABLE)


@pytest.mark.parametrize(("version", "name"), APPLY_FILES)
def test_our_responses_fold_back_to_what_the_operator_chose(load_fixture: Load, version: str, name: str) -> None:
    form = two_question_form(load_fixture, version)
    cases = load_fixture(version, name)

    for case in set(cases) & set(REACHABLE):
        choice, meaning = REACHABLE[case]
        ours = act(form, choice)
        assert ours == without_meta(cases[case]["response"]), case
        expected = None if choice == CANCEL else {form.questions[i].prompt: answer for i, answer in meaning.items()}
        assert told_to_model(cases[case]["result"]) == expected, case


def test_AC_12b_and_AC_14_stay_distinct_where_the_bridge_reports_unanswered_questions(load_fixture: Load) -> None:
    form = two_question_form(load_fixture, "0.101.0")
    cases = load_fixture("0.101.0", "apply_responses_reportUnanswered.json")
    prompts = [q.prompt for q in form.questions]

    assert act(form, []) == cases["accept_empty_content"]["response"]
    assert cases["accept_empty_content"]["result"]["updatedInput"]["annotations"] == {
        p: {"unanswered": "skipped"} for p in prompts
    }
    assert act(form, SKIP) == cases["decline"]["response"]
    assert cases["decline"]["result"]["updatedInput"]["annotations"] == {
        p: {"unanswered": "dismissed"} for p in prompts
    }


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_mcp_server_receives_exactly_what_the_operator_chose(load_fixture: Load, version: str) -> None:
    form = two_question_form(load_fixture, version)
    cases = load_fixture(version, "mcp_elicit_results.json")

    for case, (choice, _) in REACHABLE.items():
        assert cases[case]["result"] == act(form, choice), case


@pytest.mark.parametrize(("version", "name"), APPLY_FILES)
def test_we_send_only_the_companion_because_a_pick_plus_text_is_version_dependent(
    load_fixture: Load, version: str, name: str
) -> None:
    form = two_question_form(load_fixture, version)
    case = load_fixture(version, name)["accept_custom_trim"]
    choice, content = DIVERGENT["accept_custom_trim"]
    database = form.questions[0].prompt

    assert act(form, choice) == {"action": "accept", "content": content}
    # Sending the pick as well would tell 0.101.0's model "Postgres" with a note, not
    # the CockroachDB the operator typed; 0.65.0 would drop the pick anyway.
    recorded = told_to_model(case["result"])
    assert recorded is not None
    assert recorded[database] == ("CockroachDB" if version == "0.65.0" else "Postgres")
    # The companion alone reaches the model as the answer on every version.
    alone = load_fixture(version, "apply_responses.json")["accept_custom_only"]
    assert set(alone["response"]["content"]) == {"question_0_custom"}
    assert told_to_model(alone["result"]) == {database: "MySQL"}


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_mcp_server_would_otherwise_receive_a_dead_selection_and_untrimmed_text(
    load_fixture: Load, version: str
) -> None:
    form = two_question_form(load_fixture, version)
    recorded = load_fixture(version, "mcp_elicit_results.json")["accept_custom_trim"]["result"]["content"]
    choice, content = DIVERGENT["accept_custom_trim"]

    assert recorded["question_0_custom"] == " CockroachDB "
    assert "question_0" in recorded
    assert act(form, choice)["content"] == content


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_12j_whitespace_text_is_not_sent_and_the_pick_folds_back(load_fixture: Load, version: str) -> None:
    form = two_question_form(load_fixture, version)
    cases = load_fixture(version, "apply_responses.json")
    choice, content = DIVERGENT["accept_custom_whitespace_only"]

    assert act(form, choice) == {"action": "accept", "content": content}
    # Our content is the fixture's minus its whitespace companion, which the bridge ignored.
    assert {**content, "question_0_custom": "   "} == cases["accept_custom_whitespace_only"]["response"]["content"]
    assert told_to_model(cases["accept_custom_whitespace_only"]["result"]) == {form.questions[0].prompt: "SQLite"}


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_55_click_order_would_reach_the_model_so_we_send_declaration_order(load_fixture: Load, version: str) -> None:
    form = two_question_form(load_fixture, version)
    cases = load_fixture(version, "apply_responses.json")
    envs = form.questions[1].prompt
    choice, content = DIVERGENT["accept_multiselect_click_order"]

    assert told_to_model(cases["accept_multiselect_click_order"]["result"]) == {envs: "prod, dev"}
    assert act(form, choice) == {"action": "accept", "content": content}
    assert cases["accept_selections"]["response"]["content"]["question_1"] == content["question_1"]
    assert told_to_model(cases["accept_selections"]["result"])[envs] == "dev, prod"


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_typed_text_replaces_a_multi_select_pick_on_every_version(load_fixture: Load, version: str) -> None:
    form = two_question_form(load_fixture, version)
    recorded = told_to_model(load_fixture(version, "apply_responses.json")["accept_custom_on_multiselect"]["result"])
    choice, content = DIVERGENT["accept_custom_on_multiselect"]

    # Pick plus text: 0.65.0 keeps only the text, 0.77+ adds the text to the pick.
    assert recorded == {form.questions[1].prompt: "qa" if version == "0.65.0" else "dev, qa"}
    assert act(form, choice) == {"action": "accept", "content": content}


def _every_gesture(form: MappedForm) -> list[Choice]:
    """Every submission over the two-question form, plus Skip and cancel.

    Text is one sample, the fixtures' own, so the reachable cases are among the results.
    """
    single, multi = form.questions
    singles: list[dict[str, Any] | None] = [None]
    multis: list[dict[str, Any] | None] = [None]
    for text in ("", "MySQL"):
        singles += [{"question_id": single.id, "selected_options": [o.id], "custom_text": text} for o in single.options]
        singles.append({"question_id": single.id, "custom_text": text})
        for size in range(len(multi.options) + 1):
            for picks in itertools.combinations([o.id for o in multi.options], size):
                multis.append({"question_id": multi.id, "selected_options": list(picks), "custom_text": text})
    gestures: list[Choice] = [SKIP, CANCEL]
    for first, second in itertools.product(singles, multis):
        gestures.append([entry for entry in (first, second) if entry is not None])
    return gestures


@pytest.mark.parametrize(("version", "name"), RESULT_FILES)
def test_no_operator_gesture_produces_a_response_the_bridge_mangles(
    load_fixture: Load, version: str, name: str
) -> None:
    form = two_question_form(load_fixture, version)
    gestures = _every_gesture(form)
    assert all(validate_answers(form, g) == [] for g in gestures if isinstance(g, list))
    sent = {json.dumps(act(form, gesture), sort_keys=True) for gesture in gestures}

    cases = load_fixture(version, name)
    for case in set(cases) & UNREACHABLE:
        assert json.dumps(cases[case]["response"], sort_keys=True) not in sent, case
    for case in set(cases) & set(REACHABLE):
        assert json.dumps(without_meta(cases[case]["response"]), sort_keys=True) in sent, case


REFUSAL_CHOICES: dict[str, Choice | None] = {
    "accept_retry": [{"question_id": "choice", "selected_options": ["retry_fallback"]}],
    "accept_cancelled": [{"question_id": "choice", "selected_options": ["cancelled"]}],
    "accept_empty": [],
    "decline": SKIP,
    "cancel": CANCEL,
    # Not one of the dialog's consts: validation refuses it before it can be sent.
    "accept_other": None,
}


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_12c_refusal_dialog_retries_only_when_the_operator_picks_retry(load_fixture: Load, version: str) -> None:
    fixture = load_fixture(version, "refusal_fallback.json")
    form = map_elicitation(fixture["request_full"])
    assert isinstance(form, MappedForm)
    assert fixture["REFUSAL_FALLBACK_DIALOG_KIND"] == "refusal_fallback_prompt"
    assert set(fixture["result"]) == set(REFUSAL_CHOICES)

    for case, choice in REFUSAL_CHOICES.items():
        recorded = fixture["result"][case]
        if choice is None:
            assert validate_answers(
                form, [{"question_id": "choice", "selected_options": list(recorded["response"]["content"].values())}]
            )
            continue
        assert act(form, choice) == recorded["response"], case
    assert act(form, REFUSAL_CHOICES["accept_retry"]) == {"action": "accept", "content": {"choice": "retry_fallback"}}
    assert fixture["result"]["accept_retry"]["result"] == "retry_fallback"
    assert {fixture["result"][case]["result"] for case in REFUSAL_CHOICES if case != "accept_retry"} == {"cancelled"}
