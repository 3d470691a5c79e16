"""Property-based checks over open-ended input: whatever an agent or a browser sends,
the pure half neither raises nor puts anything on the wire it must not."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation import (
    Decline,
    MappedForm,
    build_response,
    map_elicitation,
    normalise,
    validate_answers,
)

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)

keys = st.sampled_from(["question_0", "question_1", "question_10", "q_7", "q_007", "apiKey", "x_custom", "x", "", "42"])
consts = st.sampled_from(["a", "b", "c", "Red", "retry_fallback", "None of the above", "", 3, None])
entries = st.one_of(
    st.fixed_dictionaries(
        {"const": consts}, optional={"title": st.sampled_from(["A", "", None]), "description": json_scalars}
    ),
    json_scalars,
)
#: Codex's `_meta.codex` on a question (docs/decisions/mapping.md#codex-forms).
codex_meta = st.fixed_dictionaries(
    {"codex": st.fixed_dictionaries({}, optional={"isOther": json_scalars, "isSecret": json_scalars}) | json_scalars}
)
companions = st.fixed_dictionaries(
    {"type": st.just("string")},
    optional={
        "title": st.sampled_from(["Other", "Notes"]),
        "_meta": st.fixed_dictionaries(
            {"_askUserQuestionCustomAnswer": st.fixed_dictionaries({"questionId": keys | json_scalars})}
        )
        | st.fixed_dictionaries(
            {
                "codex": st.fixed_dictionaries(
                    {"role": st.sampled_from(["user_note", "note"]), "questionId": keys | json_scalars},
                    optional={"isSecret": st.booleans()},
                )
            }
        ),
    },
)
properties = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "oneOf": st.lists(entries, max_size=4),
            "title": json_scalars,
            "description": json_scalars,
            "_meta": codex_meta,
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("string"), "enum": st.lists(consts, max_size=4)},
        optional={"enumNames": st.lists(json_scalars, max_size=4)},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("array"),
            "items": st.one_of(
                st.fixed_dictionaries({"anyOf": st.lists(entries, max_size=4)}),
                st.fixed_dictionaries({"enum": st.lists(consts, max_size=4)}),
                json_values,
            ),
        }
    ),
    companions,
    json_values,
)
schemas = st.fixed_dictionaries(
    {"properties": st.dictionaries(keys, properties, max_size=6)},
    optional={"type": st.sampled_from(["object", "array", None]), "_meta": codex_meta},
)
plausible_params = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["form", "form", "url", None]),
        "sessionId": st.sampled_from(["sess-1", "sess-1", ""]) | json_scalars,
        "requestedSchema": schemas | json_values,
    },
    optional={
        "requestId": json_scalars,
        "toolCallId": st.sampled_from(["tool-1", ""]) | json_scalars,
        "message": st.text(max_size=10) | json_scalars,
        "_meta": st.fixed_dictionaries({"codex": st.fixed_dictionaries({"delivery": json_scalars | st.just("async")})})
        | json_values,
    },
)
any_params = plausible_params | json_values


@given(any_params)
def test_arbitrary_params_always_map_or_decline(params: Any) -> None:
    assert isinstance(map_elicitation(params), MappedForm | Decline)


@given(plausible_params)
def test_any_mapping_is_json_on_the_wire_and_addresses_questions_by_property_key(params: dict[str, Any]) -> None:
    form = map_elicitation(params)
    if isinstance(form, Decline):
        return
    property_keys = set(params["requestedSchema"]["properties"])
    wire = form.wire_questions()

    json.dumps(wire, allow_nan=False)
    assert [q["id"] for q in wire] == [q.id for q in form.questions]
    assert {q.id for q in form.questions} <= property_keys
    companions = [q.companion_key for q in form.questions if q.companion_key is not None]
    assert set(companions) <= property_keys - {q.id for q in form.questions}
    assert len(companions) == len(set(companions))
    assert form.delivery in (None, "async")
    for question in form.questions:
        assert question.prompt
        assert (question.kind == "text") == (question.options == ())
        assert all(option.id and option.label for option in question.options)
        # Codex's note sits beside options only; "None of the above" is surfaced only beside a note.
        if question.note:
            assert question.options
            assert question.companion_key is not None
        if question.other_option is not None:
            assert question.note
            assert question.other_option in {option.id for option in question.options}


def _answers_for(form: MappedForm) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Answer payloads over this form: mostly valid, sometimes not."""

    def one(question_id: str) -> st.SearchStrategy[dict[str, Any]]:
        question = form.question(question_id)
        option_ids = [o.id for o in question.options] if question else []
        return st.fixed_dictionaries(
            {"question_id": st.just(question_id)},
            optional={
                "selected_options": st.lists(st.sampled_from([*option_ids, "bogus"]), max_size=4),
                "custom_text": st.text(alphabet=" \t\nab", max_size=6),
            },
        )

    ids = [q.id for q in form.questions] + ["unknown"]
    return st.lists(st.sampled_from(ids).flatmap(one), max_size=len(ids) + 1)


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.data())
def test_valid_answers_build_only_consts_and_trimmed_text_at_schema_keys(data: st.DataObject) -> None:
    params = data.draw(plausible_params)
    form = map_elicitation(params)
    if isinstance(form, Decline):
        return
    payload = data.draw(_answers_for(form))
    if validate_answers(form, payload):
        return
    property_keys = set(params["requestedSchema"]["properties"])

    response = build_response(form, normalise(form, payload), rejected=False)

    assert response["action"] == "accept"
    content = response["content"]
    assert isinstance(content, dict)
    assert set(content) <= property_keys
    for key, value in content.items():
        assert value is not None
        assert value != ""
        assert value != []
        question = form.question(key) or next(q for q in form.questions if q.companion_key == key)
        consts = [o.id for o in question.options]
        if isinstance(value, list):
            assert question.kind == "multi"
            assert value == [c for c in consts if c in value]
        elif value in consts and key == question.id:
            assert question.kind == "single"
        else:
            assert value == value.strip()
            assert key == (question.companion_key or question.id)
    json.dumps(response, allow_nan=False)
