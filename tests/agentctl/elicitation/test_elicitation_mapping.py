"""`elicitation/create` params -> questions: rules 1-5, D2, the prompt chain, the
extensions (docs/decisions/mapping.md#mapping-rules), the limits, and every request shape the bridge fixtures hold."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from kandev_web.agentctl.elicitation import Decline, DeclineReason, MappedForm, Option, map_elicitation
from kandev_web.agentctl.elicitation.mapping import MAX_OPTIONS_PER_PROPERTY, MAX_PARAMS_BYTES, MAX_PROPERTIES

Load = Callable[[str, str], Any]

MARKER = "_askUserQuestionCustomAnswer"


def request(properties: dict[str, Any], message: str = "Pick", **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "mode": "form",
        "sessionId": "sess-1",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties},
    }
    params.update(extra)
    return params


def one_of(*consts: str) -> dict[str, Any]:
    return {"type": "string", "oneOf": [{"const": c, "title": c} for c in consts]}


def any_of(*consts: str) -> dict[str, Any]:
    return {"type": "array", "items": {"anyOf": [{"const": c, "title": c} for c in consts]}}


def marked_companion(question_id: str) -> dict[str, Any]:
    return {"type": "string", "title": "Other", "_meta": {MARKER: {"questionId": question_id, "isCustomAnswer": True}}}


BARE_OTHER = {"type": "string", "title": "Other", "description": "Type your own answer (optional)."}


def mapped(params: object) -> MappedForm:
    result = map_elicitation(params)
    assert isinstance(result, MappedForm), result
    return result


def declined(params: object) -> DeclineReason:
    result = map_elicitation(params)
    assert isinstance(result, Decline), result
    return result.reason


def summary(form: MappedForm) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    return [(q.id, q.kind, q.companion_key, tuple(o.id for o in q.options)) for q in form.questions]


# --- Acceptance criteria ---------------------------------------------------------


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_04_single_select_with_companion_maps_to_one_question(load_fixture: Load, version: str) -> None:
    form = mapped(load_fixture(version, "ask_single_request.json"))

    assert summary(form) == [("question_0", "single", "question_0_custom", ("Postgres", "SQLite", "DynamoDB"))]
    assert form.questions[0].options == (
        Option("Postgres", "Postgres", "Relational, already operated by the team."),
        Option("SQLite", "SQLite", "Embedded; no ops burden."),
        Option("DynamoDB", "DynamoDB", None),
    )
    assert form.tool_call_id == "tool-42"
    assert form.session_id == "sess-1"


@pytest.mark.parametrize(
    ("version", "name"),
    [("0.65.0", "wire_mcp_apiKey_elicitation_0.65.0.json"), ("0.101.0", "wire_mcp_apiKey_elicitation.json")],
)
def test_AC_04a_mcp_passthrough_string_maps_to_one_zero_option_text_question(
    load_fixture: Load, version: str, name: str
) -> None:
    form = mapped(load_fixture(version, name))

    assert summary(form) == [("apiKey", "text", None, ())]
    question = form.questions[0]
    assert question.accepts_text
    assert question.prompt == "Need your key"
    assert form.tool_call_id is None


@pytest.mark.parametrize(
    ("version", "name"),
    [
        ("0.65.0", "ask_two_request.json"),
        ("0.65.0", "wire_two_questions_elicitation_0.65.0.json"),
        ("0.101.0", "ask_two_request.json"),
        ("0.101.0", "wire_two_questions_elicitation.json"),
    ],
)
def test_AC_05_two_questions_take_their_prompts_from_descriptions(load_fixture: Load, version: str, name: str) -> None:
    params = load_fixture(version, name)
    form = mapped(params)

    assert [q.prompt for q in form.questions] == [
        "Which database should the new service use?",
        "Which environments should it deploy to?",
    ]
    assert params["message"] not in [q.prompt for q in form.questions]
    assert [q.title for q in form.questions] == ["Datastore", "Envs"]


@pytest.mark.parametrize(
    ("version", "name", "prompt"),
    [
        ("0.65.0", "ask_single_request.json", "Which database should the new service use?"),
        ("0.65.0", "wire_single_question_elicitation_0.65.0.json", "Pick a colour"),
        ("0.101.0", "ask_single_request.json", "Which database should the new service use?"),
        ("0.101.0", "wire_single_question_elicitation.json", "Pick a colour"),
    ],
)
def test_AC_06_lone_question_without_description_takes_the_message(
    load_fixture: Load, version: str, name: str, prompt: str
) -> None:
    form = mapped(load_fixture(version, name))

    assert [q.prompt for q in form.questions] == [prompt]


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_AC_07_array_any_of_maps_to_one_multi_select_question(load_fixture: Load, version: str) -> None:
    form = mapped(load_fixture(version, "ask_two_request.json"))

    envs = form.question("question_1")
    assert envs is not None
    assert (envs.kind, [o.id for o in envs.options]) == ("multi", ["dev", "staging", "prod"])
    assert envs.companion_key == "question_1_custom"


@pytest.mark.parametrize(
    ("version", "name", "key"),
    [
        ("0.65.0", "refusal_fallback.json", "request_full"),
        ("0.65.0", "refusal_fallback.json", "request_minimal"),
        ("0.101.0", "refusal_fallback.json", "request_full"),
        ("0.101.0", "refusal_fallback.json", "request_minimal"),
        ("0.65.0", "wire_refusal_fallback_elicitation_0.65.0.json", None),
    ],
)
def test_AC_12c_refusal_fallback_maps_to_one_two_option_question_prompted_by_message(
    load_fixture: Load, version: str, name: str, key: str | None
) -> None:
    data = load_fixture(version, name)
    params = data[key] if key else data
    form = mapped(params)

    assert summary(form) == [("choice", "single", None, ("retry_fallback", "cancelled"))]
    question = form.questions[0]
    assert question.prompt == params["message"]
    assert question.title is None
    assert not question.accepts_text
    assert form.tool_call_id is None


def test_AC_12d_eleven_questions_map_in_one_order_whatever_the_declaration_order() -> None:
    keys = [f"question_{n}" for n in range(11)]
    shuffler = random.Random(12)
    orders = set()
    for _ in range(100):
        shuffled = keys[:]
        shuffler.shuffle(shuffled)
        form = mapped(request({key: one_of("a", "b") for key in shuffled}))
        orders.add(tuple(q.id for q in form.questions))

    assert orders == {tuple(keys)}
    order = next(iter(orders))
    assert order.index("question_2") < order.index("question_10")


def test_AC_12e_companion_naming_no_question_is_ignored() -> None:
    form = mapped(request({"question_0": one_of("a", "b"), "stray": marked_companion("question_9")}))

    assert summary(form) == [("question_0", "single", None, ("a", "b"))]


def test_AC_16_url_mode_is_declined(load_fixture: Load) -> None:
    requests = load_fixture("0.65.0", "mcp_create_requests.json")

    assert declined(requests["url_with_url_and_id"]) is DeclineReason.UNSUPPORTED_MODE
    assert declined(request({"a": {"type": "string"}}, mode="url")) is DeclineReason.UNSUPPORTED_MODE


def test_AC_17_request_scope_is_declined() -> None:
    params = request({"a": {"type": "string"}}, requestId="req-1")
    del params["sessionId"]

    assert declined(params) is DeclineReason.REQUEST_SCOPED


def test_AC_17_both_scopes_are_declined() -> None:
    assert declined(request({"a": {"type": "string"}}, requestId="req-1")) is DeclineReason.BOTH_SCOPES


def test_AC_17_a_null_request_id_is_no_scope_at_all() -> None:
    assert mapped(request({"a": {"type": "string"}}, requestId=None)).session_id == "sess-1"


@pytest.mark.parametrize(
    "properties",
    [
        {},
        {
            "o": {"type": "object", "properties": {"a": {"type": "string"}}},
            "z": {"type": "null"},
            "list": {"type": "array"},
            "nested": {"type": "array", "items": {"type": "array", "items": {"enum": ["a"]}}},
        },
        None,
    ],
    ids=["empty", "only_unrecognised", "absent"],
)
def test_AC_18_schema_with_no_recognised_property_is_declined(properties: dict[str, Any] | None) -> None:
    params = request(properties or {})
    if properties is None:
        del params["requestedSchema"]["properties"]

    assert declined(params) is DeclineReason.NO_QUESTIONS


def test_an_empty_property_key_is_no_question() -> None:
    form = mapped(request({"": {"type": "string"}, "name": {"type": "string"}}))
    assert [q.id for q in form.questions] == ["name"]
    assert declined(request({"": {"type": "string", "description": "Anything?"}})) is DeclineReason.NO_QUESTIONS


def test_AC_18_mcp_form_without_properties_is_declined(load_fixture: Load) -> None:
    assert declined(load_fixture("0.101.0", "mcp_create_requests.json")["form_no_schema"]) is DeclineReason.NO_QUESTIONS


# --- Request envelope --------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        (None, DeclineReason.NOT_AN_OBJECT),
        ([], DeclineReason.NOT_AN_OBJECT),
        (
            {"sessionId": "s", "requestedSchema": {"properties": {"a": {"type": "string"}}}},
            DeclineReason.UNSUPPORTED_MODE,
        ),
        (request({"a": {"type": "string"}}, sessionId=""), DeclineReason.MISSING_SESSION_ID),
        (request({"a": {"type": "string"}}, sessionId=7), DeclineReason.MISSING_SESSION_ID),
        (request({"a": {"type": "string"}}, message=["x"]), DeclineReason.MALFORMED_REQUEST),
        (request({"a": {"type": "string"}}, toolCallId=3), DeclineReason.MALFORMED_REQUEST),
        (request({"a": {"type": "string"}}, requestedSchema="x"), DeclineReason.MALFORMED_SCHEMA),
        (
            request({"a": {"type": "string"}}, requestedSchema={"type": "array", "properties": {}}),
            DeclineReason.MALFORMED_SCHEMA,
        ),
        (request({"a": {"type": "string"}}, requestedSchema={"properties": ["a"]}), DeclineReason.MALFORMED_SCHEMA),
        ({"mode": "form", "sessionId": "s", "message": "m"}, DeclineReason.MALFORMED_SCHEMA),
        (
            {
                "mode": "form",
                "sessionId": "s",
                "message": "m",
                "requestedSchema": {"properties": {"a": {"type": "string"}}},
                "x": {1, 2},
            },
            DeclineReason.MALFORMED_REQUEST,
        ),
    ],
    ids=[
        "null",
        "list",
        "no_mode",
        "empty_session",
        "numeric_session",
        "non_string_message",
        "non_string_tool_call",
        "schema_not_object",
        "schema_type_array",
        "properties_not_object",
        "no_schema",
        "not_json",
    ],
)
def test_malformed_envelopes_are_declined(params: object, reason: DeclineReason) -> None:
    assert declined(params) is reason


def test_missing_root_type_is_tolerated() -> None:
    params = request({"a": {"type": "string"}})
    del params["requestedSchema"]["type"]

    assert summary(mapped(params)) == [("a", "text", None, ())]


def test_missing_message_falls_back_to_title_then_key() -> None:
    params = request({"b": {"type": "string", "title": "Branch"}, "a": {"type": "string"}})
    del params["message"]

    assert [q.prompt for q in mapped(params).questions] == ["a", "Branch"]


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_form_without_tool_call_id_has_none(load_fixture: Load, version: str) -> None:
    form = mapped(load_fixture(version, "ask_single_request_no_toolcallid.json"))

    assert form.tool_call_id is None
    assert summary(form) == [("question_0", "single", "question_0_custom", ("Postgres", "SQLite", "DynamoDB"))]


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_question_without_header_has_no_title_and_the_message_as_prompt(load_fixture: Load, version: str) -> None:
    form = mapped(load_fixture(version, "ask_noheader_request.json"))

    assert [(q.title, q.prompt) for q in form.questions] == [(None, "Pick one")]
    assert summary(form) == [("question_0", "single", "question_0_custom", ("A", "B"))]


# --- D2: companions --------------------------------------------------------------


def test_D2_companion_found_by_marker_not_by_suffix() -> None:
    form = mapped(request({"pick": one_of("a", "b"), "answer_freeform": marked_companion("pick")}))

    assert summary(form) == [("pick", "single", "answer_freeform", ("a", "b"))]


def test_D2_two_companions_for_one_question_the_first_under_D1_wins() -> None:
    form = mapped(
        request({"q": one_of("a", "b"), "z_note_2": marked_companion("q"), "z_note_10": marked_companion("q")})
    )

    assert summary(form) == [("q", "single", "z_note_2", ("a", "b"))]


def test_D2_companion_of_an_ignored_property_is_ignored_too() -> None:
    form = mapped(request({"n": {"type": "object"}, "n_other": marked_companion("n"), "a": {"type": "string"}}))

    assert summary(form) == [("a", "text", None, ())]


def test_D2_a_marker_that_cannot_be_read_still_keeps_the_property_from_being_a_question() -> None:
    broken = {"type": "string", "title": "Other", "_meta": {MARKER: {"questionId": 0}}}
    form = mapped(request({"q": one_of("a", "b"), "q_custom_x": broken}))

    assert summary(form) == [("q", "single", None, ("a", "b"))]


# --- Bridge >= 0.82: companions without the marker ----------------------------------


@pytest.mark.parametrize(
    "name", ["ask_single_request.json", "wire_single_question_elicitation.json", "ask_noheader_request.json"]
)
def test_markerless_custom_companion_of_bridge_0_101_is_found(load_fixture: Load, name: str) -> None:
    params = load_fixture("0.101.0", name)
    assert MARKER not in json.dumps(params)

    form = mapped(params)

    assert [(q.id, q.companion_key, q.accepts_text) for q in form.questions] == [
        ("question_0", "question_0_custom", True)
    ]


def test_markerless_companions_of_a_two_question_0_101_form(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.101.0", "wire_two_questions_elicitation.json"))

    assert summary(form) == [
        ("question_0", "single", "question_0_custom", ("Postgres", "SQLite", "DynamoDB")),
        ("question_1", "multi", "question_1_custom", ("dev", "staging", "prod")),
    ]


def test_air_client_form_with_marker_and_jetbrains_meta_maps_like_the_plain_one(load_fixture: Load) -> None:
    air = mapped(load_fixture("0.101.0", "ask_two_request_airClient.json"))
    plain = mapped(load_fixture("0.101.0", "ask_two_request.json"))

    assert air.questions == plain.questions


def test_marker_wins_over_markerless_companion() -> None:
    form = mapped(request({"q": one_of("a", "b"), "q_custom": BARE_OTHER, "zz_text": marked_companion("q")}))

    assert summary(form) == [("q", "single", "zz_text", ("a", "b"))]


def test_markerless_custom_without_its_base_property_is_a_text_question() -> None:
    form = mapped(request({"notes_custom": BARE_OTHER}))

    assert summary(form) == [("notes_custom", "text", None, ())]


@pytest.mark.parametrize(
    "companion",
    [
        {"type": "string", "title": "Others"},
        {"type": "string"},
        {"type": "string", "title": "Other", "oneOf": [{"const": "x"}]},
    ],
    ids=["other_title", "untitled", "has_enum"],
)
def test_custom_keyed_property_that_is_not_a_bare_other_string_is_no_companion(companion: dict[str, Any]) -> None:
    form = mapped(request({"q": one_of("a", "b"), "q_custom": companion}))

    assert [(q.id, q.companion_key) for q in form.questions] == [("q", None), ("q_custom", None)]


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_markerless_or_marked_companion_of_a_malformed_question_is_ignored_and_the_form_declined(
    load_fixture: Load, version: str
) -> None:
    # The bridge passes option entries it never validated (extract_ask_user_questions:
    # "option_entries_not_validated"); they arrive as const-less `{}` entries.
    extracted = load_fixture(version, "extract_ask_user_questions.json")["option_entries_not_validated"]["result"]
    params = load_fixture(version, "ask_request_from_unvalidated_options.json")
    assert len(params["requestedSchema"]["properties"]["question_0"]["oneOf"]) == len(extracted[0]["options"])

    assert declined(params) is DeclineReason.NO_QUESTIONS


# --- Malformed enum entries and D10 ------------------------------------------------------


@pytest.mark.parametrize(
    "entries",
    [
        [{"const": "a"}, {"title": "no const"}],
        [{"const": "a"}, {"const": 2}],
        [{"const": "a"}, "b"],
        [{"const": "a"}, {"const": "a", "title": "again"}],
        [{"const": ""}],
        "not a list",
    ],
    ids=["missing_const", "numeric_const", "not_object", "repeated_const", "empty_const", "not_list"],
)
def test_malformed_enum_entries_make_the_property_ignored(entries: object) -> None:
    form = mapped(
        request(
            {
                "single": {"type": "string", "oneOf": entries},
                "multi": {"type": "array", "items": {"anyOf": entries}},
                "keep": {"type": "string"},
            }
        )
    )

    assert summary(form) == [("keep", "text", None, ())]


@pytest.mark.parametrize(
    "prop",
    [{"type": "string", "oneOf": []}, {"type": "array", "items": {"anyOf": []}}, {"type": "string", "enum": []}],
    ids=["one_of", "any_of", "enum"],
)
def test_D10_empty_enum_list_makes_a_zero_option_text_question(prop: dict[str, Any]) -> None:
    form = mapped(request({"q": prop}))

    assert summary(form) == [("q", "text", None, ())]
    assert form.questions[0].accepts_text


def test_option_label_falls_back_to_const_and_description_is_optional() -> None:
    form = mapped(
        request(
            {
                "q": {
                    "type": "string",
                    "oneOf": [
                        {"const": "a"},
                        {"const": "b", "title": "", "description": 5},
                        {"const": "c", "title": "See", "description": "d"},
                    ],
                }
            }
        )
    )

    assert form.questions[0].options == (Option("a", "a"), Option("b", "b"), Option("c", "See", "d"))


def test_options_keep_declaration_order() -> None:
    form = mapped(request({"q": one_of("zeta", "alpha", "mid")}))

    assert [o.id for o in form.questions[0].options] == ["zeta", "alpha", "mid"]


# --- MCP enum forms (extension) -----------------------------------------------------


@pytest.mark.parametrize("version", ["0.65.0", "0.101.0"])
def test_mcp_create_requests_map_as_decided(load_fixture: Load, version: str) -> None:
    requests = load_fixture(version, "mcp_create_requests.json")
    expected = {
        "form_apiKey": [("apiKey", "text", None, ())],
        # The legacy string enum is rule 1, `n` (number) rule 4c, `ok` (boolean) rule 4b.
        "form_mode_explicit_with_required": [
            ("color", "single", None, ("r", "g")),
            ("n", "number", None, ()),
            ("ok", "boolean", None, ()),
        ],
        "form_schema_type_overridden": [("a", "text", None, ())],
        "form_no_schema": DeclineReason.NO_QUESTIONS,
        "url_without_url": DeclineReason.NOT_AN_OBJECT,
        "url_with_url_and_id": DeclineReason.UNSUPPORTED_MODE,
        "url_with_url_no_id_has_generated_id": DeclineReason.UNSUPPORTED_MODE,
    }
    assert set(requests) == set(expected)

    for name, params in requests.items():
        result = map_elicitation(params)
        got = result.reason if isinstance(result, Decline) else summary(result)
        assert got == expected[name], name


def test_mcp_string_enum_takes_labels_from_enum_names_of_equal_length() -> None:
    form = mapped(request({"c": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}}))

    assert form.questions[0].options == (Option("r", "Red"), Option("g", "Green"))


@pytest.mark.parametrize("names", [["Red"], ["Red", 2], "Red,Green"], ids=["short", "non_string", "not_list"])
def test_mcp_enum_names_that_do_not_fit_are_not_used(names: object) -> None:
    form = mapped(request({"c": {"type": "string", "enum": ["r", "g"], "enumNames": names}}))

    assert form.questions[0].options == (Option("r", "r"), Option("g", "g"))


def test_mcp_array_enum_maps_to_multi_select() -> None:
    form = mapped(request({"envs": {"type": "array", "items": {"type": "string", "enum": ["dev", "prod"]}}}))

    assert summary(form) == [("envs", "multi", None, ("dev", "prod"))]


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "enum": [1, 2]},
        {"type": "string", "enum": ["a", "a"]},
        {"type": "array", "items": {"enum": [True]}},
        {"type": "number", "enum": [1, 2]},
        {"type": "object"},
        {"type": "null"},
        {"type": "array", "items": {"type": "array"}},
        {"type": ["string", "null"]},
        "string",
    ],
    ids=[
        "number_values",
        "repeated",
        "boolean_items",
        "number_enum",
        "object",
        "null",
        "nested_array",
        "type_list",
        "not_object",
    ],
)
def test_non_string_or_malformed_enums_and_other_types_are_rule_5(prop: object) -> None:
    form = mapped(request({"x": prop, "keep": {"type": "string"}}))

    assert summary(form) == [("keep", "text", None, ())]


# --- Limits (fail closed) --------------------------------------------------------------


def test_64_properties_map_and_65_are_declined() -> None:
    at_limit = {f"q{n}": {"type": "string"} for n in range(MAX_PROPERTIES)}
    assert len(mapped(request(at_limit)).questions) == 64

    over = {**at_limit, "one_more": {"type": "object"}}
    assert declined(request(over)) is DeclineReason.TOO_MANY_PROPERTIES


@pytest.mark.parametrize("shape", ["one_of", "any_of", "enum", "items_enum"])
def test_256_options_map_and_257_are_declined(shape: str) -> None:
    def prop(count: int) -> dict[str, Any]:
        consts = [f"o{n}" for n in range(count)]
        return {
            "one_of": {"type": "string", "oneOf": [{"const": c} for c in consts]},
            "any_of": {"type": "array", "items": {"anyOf": [{"const": c} for c in consts]}},
            "enum": {"type": "string", "enum": consts},
            "items_enum": {"type": "array", "items": {"enum": consts}},
        }[shape]

    assert len(mapped(request({"q": prop(MAX_OPTIONS_PER_PROPERTY)})).questions[0].options) == 256
    assert declined(request({"q": prop(MAX_OPTIONS_PER_PROPERTY + 1)})) is DeclineReason.TOO_MANY_OPTIONS


def test_too_many_options_on_an_ignored_property_still_declines() -> None:
    bad = {"type": "string", "oneOf": [{"const": "same"}] * (MAX_OPTIONS_PER_PROPERTY + 1)}

    assert declined(request({"bad": bad, "ok": {"type": "string"}})) is DeclineReason.TOO_MANY_OPTIONS


def test_params_of_one_mib_map_and_one_byte_more_is_declined() -> None:
    base = request({"a": {"type": "string"}}, message="")
    overhead = len(json.dumps(base, separators=(",", ":")).encode())
    padding = MAX_PARAMS_BYTES - overhead
    # "é" is two bytes in UTF-8: the limit counts bytes, not characters.
    fits = request({"a": {"type": "string"}}, message="é" * (padding // 2) + "x" * (padding % 2))
    assert len(json.dumps(fits, ensure_ascii=False, separators=(",", ":")).encode()) == MAX_PARAMS_BYTES
    assert isinstance(map_elicitation(fits), MappedForm)

    fits["message"] += "x"
    assert declined(fits) is DeclineReason.TOO_LARGE


# --- Secrets -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "title", "sensitive"),
    [
        ("apiKey", None, True),
        ("OPENAI_API_KEY", None, True),
        ("github_token", None, True),
        ("dbpassword", None, True),
        ("field_1", "Client secret", True),
        ("q", "Your Password", True),
        ("question_0", "Datastore", False),
        ("monkey", "Keyboard layout", False),
        ("keystone", None, False),
    ],
)
def test_secrets_flag_marks_credential_looking_keys_and_titles(key: str, title: str | None, sensitive: bool) -> None:
    prop: dict[str, Any] = {"type": "string"}
    if title:
        prop["title"] = title

    question = mapped(request({key: prop})).questions[0]

    assert question.sensitive is sensitive
    assert question.to_wire()["sensitive"] is sensitive


# --- Wire shape ----------------------------------------------------------------------


def test_wire_questions_match_the_contract_and_never_carry_the_companion(load_fixture: Load) -> None:
    form = mapped(load_fixture("0.65.0", "ask_two_request.json"))

    wire = form.wire_questions()

    assert wire == [
        {
            "id": "question_0",
            "title": "Datastore",
            "prompt": "Which database should the new service use?",
            "kind": "single",
            "accepts_text": True,
            "sensitive": False,
            "options": [
                {"id": "Postgres", "label": "Postgres", "description": "Relational, already operated by the team."},
                {"id": "SQLite", "label": "SQLite", "description": "Embedded; no ops burden."},
                {"id": "DynamoDB", "label": "DynamoDB", "description": None},
            ],
        },
        {
            "id": "question_1",
            "title": "Envs",
            "prompt": "Which environments should it deploy to?",
            "kind": "multi",
            "accepts_text": True,
            "sensitive": False,
            "options": [
                {"id": "dev", "label": "dev", "description": None},
                {"id": "staging", "label": "staging", "description": None},
                {"id": "prod", "label": "prod", "description": None},
            ],
        },
    ]
    assert "_custom" not in json.dumps(wire)


@pytest.mark.parametrize(
    "properties",
    [
        {"colour\x00": {"type": "string", "enum": ["red", "blue"]}},
        {"colour": {"type": "string", "oneOf": [{"const": "red\ud800", "title": "Red"}, {"const": "b", "title": "B"}]}},
        {"notes": {"type": "string"}, "half \udfff": {"type": "string"}},
    ],
    ids=["nul-in-key", "lone-surrogate-const", "one-of-two-keys"],
)
def test_an_id_the_web_app_cannot_store_is_declined_since_no_answer_could_name_it(properties):
    """The web app stores it with U+FFFD, so its answers would not match.

    docs/decisions/across-processes.md#unstorable-characters.
    """
    assert declined(request(properties)) is DeclineReason.UNSTORABLE_ID


def test_unstorable_text_in_a_title_or_description_is_still_asked():
    form = map_elicitation(request({"colour": {"type": "string", "title": "Col\x00our", "description": "\ud800"}}))
    assert isinstance(form, MappedForm)
    assert [q.id for q in form.questions] == ["colour"]
