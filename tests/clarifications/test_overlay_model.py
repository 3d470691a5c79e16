"""The overlay's view-model: each question's control, picks, limits and hint, and the flow of each path."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_web import limits
from kandev_web.clarifications.overlay_model import (
    ASK_FLOW,
    ELICITATION_FLOW,
    Control,
    bundle_view,
    constraint_hint,
    flow_of,
)

PENDING = "p-1"


def only(question: dict, source: str = "elicitation"):
    (view,) = bundle_view(PENDING, source, [question]).questions
    return view


def test_the_two_paths_differ_only_in_their_flow():
    assert flow_of("elicitation") is ELICITATION_FLOW
    assert flow_of("ask_user_question") is ASK_FLOW
    assert ASK_FLOW.auto_advance
    assert ASK_FLOW.all_required
    assert ASK_FLOW.custom_text
    assert ASK_FLOW.follow_up
    assert not (ASK_FLOW.confirm_empty)
    assert not (ASK_FLOW.keep_picks)
    assert not (ASK_FLOW.checks)
    assert ELICITATION_FLOW.confirm_empty
    assert ELICITATION_FLOW.keep_picks
    assert ELICITATION_FLOW.checks
    assert not (ELICITATION_FLOW.auto_advance)
    assert not (ELICITATION_FLOW.all_required)
    assert not (ELICITATION_FLOW.custom_text)


def test_an_ask_question_offers_its_options_and_a_custom_answer_within_the_ask_limit():
    question = {
        "id": "q1",
        "prompt": "Which database?",
        "options": [
            {"id": "pg", "label": "PostgreSQL", "description": "the default"},
            {"id": "my", "label": "MySQL"},
        ],
    }
    view = only(question, source="ask_user_question")
    assert view.kind == "single"
    assert not view.multiple
    assert view.picked == ()
    assert [(o.id, o.label, o.description, o.picked) for o in view.options] == [
        ("pg", "PostgreSQL", "the default", False),
        ("my", "MySQL", "", False),
    ]
    entry = view.entry
    assert entry.control is Control.TEXT
    assert entry.label_hidden
    assert entry.label == "Your own answer"
    assert entry.placeholder == "Or type a custom answer…"
    assert entry.attributes == (("maxlength", str(limits.ASK_ANSWER_CHARS)),)
    assert not entry.required
    assert entry.described_by == ""
    assert view.hint == ""
    assert view.data == ()
    assert view.problems == ()


def test_a_lone_ask_question_is_sent_by_its_pick_and_a_bundle_by_submit():
    one = bundle_view(PENDING, "ask_user_question", [{"id": "a", "prompt": "A?"}])
    two = bundle_view(PENDING, "ask_user_question", [{"id": "a", "prompt": "A?"}, {"id": "b", "prompt": "B?"}])
    assert not one.has_submit
    assert two.has_submit
    assert two.total == 2
    assert bundle_view(PENDING, "elicitation", [{"id": "a", "prompt": "A?"}]).has_submit


def test_an_elicitation_choice_takes_typed_text_only_when_it_says_so():
    options = [{"id": "x", "label": "X"}, {"id": "y", "label": "Y"}]
    assert only({"id": "q", "kind": "single", "options": options}).entry is None
    entry = only({"id": "q", "kind": "single", "options": options, "accepts_text": True}).entry
    assert entry.control is Control.TEXT
    assert entry.placeholder == "Or type your own answer"


def test_a_boolean_is_yes_and_no_with_its_default_picked():
    view = only({"id": "ok", "kind": "boolean", "required": True, "default": False})
    assert [(o.id, o.label, o.picked) for o in view.options] == [("true", "Yes", False), ("false", "No", True)]
    assert view.picked == ("false",)
    assert view.required
    assert view.entry is None


def test_a_multi_question_picks_its_default_options_in_order():
    options = [{"id": i, "label": i} for i in "abc"]
    view = only({"id": "m", "kind": "multi", "options": options, "default": ["c", "a", 3]})
    assert view.multiple
    assert view.picked == ("c", "a")
    assert [o.picked for o in view.options] == [True, False, True]


def test_a_number_is_a_number_field_with_its_range():
    view = only(
        {"id": "n", "kind": "integer", "required": True, "default": 3, "constraints": {"minimum": 1, "maximum": 5}}
    )
    entry = view.entry
    assert entry.control is Control.NUMBER
    assert entry.input_type == "number"
    assert (entry.inputmode, entry.step, entry.value) == ("numeric", "1", "3")
    assert entry.attributes == (("min", "1"), ("max", "5"))
    assert entry.required
    assert entry.described_by == f"hint-{PENDING}-0 problem-{PENDING}-0"
    assert view.hint == "A whole number from 1 to 5"
    assert view.data == (("minimum", 1), ("maximum", 5))
    decimal = only({"id": "n", "kind": "number"}).entry
    assert (decimal.inputmode, decimal.step, decimal.attributes) == ("decimal", "any", ())


def test_a_format_picks_the_native_control():
    def control(fmt):
        entry = only({"id": "t", "kind": "text", "accepts_text": True, "constraints": {"format": fmt}}).entry
        return entry.control, entry.input_type

    assert control("email") == (Control.NATIVE, "email")
    assert control("uri") == (Control.NATIVE, "url")
    assert control("date") == (Control.NATIVE, "date")
    assert control("date-time") == (Control.DATETIME, "")


def test_a_text_field_announces_its_limits_to_the_browser_and_the_slot_has_agentctls_sentences():
    service = {
        "id": "service",
        "title": "Service",
        "kind": "text",
        "accepts_text": True,
        "required": True,
        "constraints": {"minLength": 3, "maxLength": 12, "pattern": "^[a-z-]+$"},
    }
    view = only(service)
    # A text area: minlength is its own, the pattern (written for the browser) is clarification.js's to try.
    assert view.entry.control is Control.TEXT
    assert view.entry.required
    assert view.entry.attributes == (("minlength", "3"), ("data-pattern", r"[\s\S]*(?:^[a-z\-]+$)[\s\S]*"))
    assert dict(view.problems) == {
        "required_unanswered": "“Service” needs an answer.",
        "text_too_long": f"Typed text for “Service” may be at most {limits.ELICITATION_ANSWER_CHARS} characters.",
        "too_short": "“Service” must be at least 3 characters long.",
        "too_long": "“Service” must be at most 12 characters long.",
        "pattern_mismatch": "“Service” is not in the form the agent asked for.",
    }
    assert ("problem-too-short", "“Service” must be at least 3 characters long.") in view.problem_data
    # An e-mail field is an input, which takes the pattern itself; a URL's format is left to agentctl.
    email = only({**service, "constraints": {"format": "email", "pattern": "@example[.]com$"}})
    assert email.entry.input_type == "email"
    assert dict(email.entry.attributes) == {"pattern": r"[\s\S]*(?:@example[\.]com$)[\s\S]*"}
    assert dict(email.problems)["format_mismatch"] == "“Service” must be an e-mail address."
    assert "format_mismatch" not in dict(only({**service, "constraints": {"format": "uri"}}).problems)


def test_a_number_field_says_its_type_and_range_in_agentctls_words():
    view = only({"id": "n", "title": "Ratio", "kind": "number", "constraints": {"minimum": 0.5}})
    assert view.entry.attributes == (("min", "0.5"),)
    assert not view.entry.required
    assert dict(view.problems) == {
        "wrong_type": "“Ratio” must be a number.",
        "below_minimum": "“Ratio” must be at least 0.5.",
    }
    whole = only({"id": "n", "title": "Replicas", "kind": "integer", "constraints": {"minimum": 0.5, "maximum": 5.5}})
    assert whole.entry.attributes == (("min", "1"), ("max", "5"))
    assert dict(whole.problems)["not_an_integer"] == "“Replicas” must be a whole number."
    # The sentence names agentctl's own limit, as its refusal would.
    assert dict(whole.problems)["below_minimum"] == "“Replicas” must be at least 0.5."


def test_a_multi_question_counts_its_picks_in_agentctls_words():
    options = [{"id": i, "label": i} for i in "abc"]
    view = only({"id": "m", "title": "Regions", "kind": "multi", "options": options, "constraints": {"maxItems": 2}})
    assert view.entry is None
    assert dict(view.problems) == {"too_many_items": "Choose at most 2 options for “Regions”."}


def test_a_sensitive_question_is_a_password_never_prefilled():
    view = only(
        {"id": "key", "kind": "text", "accepts_text": True, "sensitive": True, "required": True, "default": "hunter2"}
    )
    entry = view.entry
    assert entry.control is Control.SECRET
    assert entry.value == ""
    assert entry.required
    assert entry.described_by == ""
    assert view.sensitive
    # Checked like any text: what it must be is the form's, not the secret's.
    assert dict(view.problems)["required_unanswered"] == "“key” needs an answer."


def test_question_ids_index_the_cards_of_a_bundle():
    view = bundle_view(PENDING, "elicitation", [{"id": "a", "kind": "text"}, {"id": "b", "kind": "text"}])
    assert [(q.id, q.index, q.dom_id) for q in view.questions] == [("a", 0, f"{PENDING}-0"), ("b", 1, f"{PENDING}-1")]


def test_the_hint_says_every_limit():
    assert constraint_hint({"kind": "text", "constraints": {"minLength": 3, "format": "email"}}) == (
        "An e-mail address · At least 3 characters"
    )
    assert constraint_hint({"kind": "multi", "constraints": {"maxItems": 2}}) == "Choose at most 2"


lengths = st.none() | st.integers(min_value=0, max_value=2 * limits.ELICITATION_ANSWER_CHARS)
numbers = st.none() | st.integers(-1000, 1000) | st.floats(-1e6, 1e6, allow_nan=False)
constraint_sets = st.fixed_dictionaries(
    {},
    optional={
        "minLength": lengths,
        "maxLength": lengths,
        "pattern": st.none() | st.text(max_size=20),
        "format": st.none() | st.sampled_from(["", "email", "uri", "date", "date-time"]),
        "minimum": numbers,
        "maximum": numbers,
        "minItems": lengths,
        "maxItems": lengths,
    },
)


@given(kind=st.sampled_from(["text", "number", "integer", "multi", "single", "boolean"]), constraints=constraint_sets)
def test_constraints_are_carried_to_the_card_and_the_field_as_they_are(kind, constraints):
    question = {"id": "q", "kind": kind, "accepts_text": True, "constraints": constraints}
    view = only(question)
    # The card carries exactly the constraints set, under their data-* names, values untouched.
    names = {
        "minLength": "min-length",
        "maxLength": "max-length",
        "pattern": "pattern",
        "format": "format",
        "minimum": "minimum",
        "maximum": "maximum",
        "minItems": "min-items",
        "maxItems": "max-items",
    }
    said = {
        key: value
        for key, value in constraints.items()
        if (value if key in ("pattern", "format") else value is not None)
    }
    assert dict(view.data) == {names[key]: value for key, value in said.items()}
    attributes = dict(view.entry.attributes)
    if kind in ("number", "integer"):
        assert view.entry.control is Control.NUMBER
        assert set(attributes) == {
            name for key, name in (("minimum", "min"), ("maximum", "max")) if constraints.get(key) is not None
        }
    elif view.entry.control is Control.DATETIME or kind != "text":
        assert attributes == {}
    else:
        # No maxlength: the browser counts UTF-16 units of the untrimmed text and would stop a valid answer.
        assert "maxlength" not in attributes
        if constraints.get("minLength") is not None:
            assert attributes["minlength"] == str(constraints["minLength"])
    # Every field of a checked flow points at its hint and problem, which the card renders with these ids.
    assert view.entry.described_by == f"hint-{view.dom_id} problem-{view.dom_id}"
    assert isinstance(view.hint, str)


CODEX_COLOUR = {
    "id": "colour",
    "title": "Colour",
    "prompt": "Which colour should I use?",
    "kind": "single",
    "accepts_text": True,
    "sensitive": False,
    "options": [{"id": "Red", "label": "Red"}, {"id": "None of the above", "label": "None of the above"}],
    "required": True,
    "note": True,
    "other_option": "None of the above",
}


def test_codexs_note_is_a_note_beside_the_pick_and_names_the_option_that_makes_it_the_answer():
    view = only(CODEX_COLOUR)
    assert ("note", "true") in view.data
    assert ("other-option", "None of the above") in view.data
    assert view.entry is not None
    assert view.entry.label == "Your note"
    assert view.entry.placeholder == "Add a note to your choice, or type your own answer"
    assert not view.entry.required  # a pick, or the note with "None of the above", answers it


def test_a_note_without_none_of_the_above_is_only_a_note():
    view = only({**CODEX_COLOUR, "other_option": None})
    assert ("note", "true") in view.data
    assert not any(name == "other-option" for name, _ in view.data)
    assert view.entry is not None
    assert view.entry.placeholder == "Add a note to your choice"


def test_a_claude_companion_is_no_note():
    view = only({**CODEX_COLOUR, "note": None, "other_option": None})
    assert not any(name in ("note", "other-option") for name, _ in view.data)
    assert view.entry is not None
    assert view.entry.label == "Your own answer"
