"""ACP form elicitation through a real agentctl and a scripted agent: agentctl's acceptance criteria.

Each test is named after the acceptance criterion (AC-nn) or decision (Dn, Fn)
it shows. What the operator sees is read off the ``elicitation.requested``
notification; what the agent received is what it reported back (``echo``).
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from datetime import datetime, timedelta

import pytest

from kandev_web.agentctl.elicitation.ordering import d1_sorted
from kandev_web.agentctl.stream_client import NotFound, ValidationFailed
from testing_support.agentctl import open_session
from testing_support.scripted_elicitation import (
    COLOUR_FORM,
    ENVS,
    SESSION,
    answered,
    answers_read,
    ask,
    companion,
    elicit,
    form,
    in_a_turn,
    multi,
    run_script,
    single,
)

pytestmark = pytest.mark.asyncio

TWO_QUESTIONS = form(
    {
        "question_0": single(title="Colour", description="Which colour?"),
        "question_0_custom": companion("question_0"),
        "question_1": multi(title="Envs", description="Which environments?"),
        "question_1_custom": companion("question_1"),
    },
    message="Please answer the following questions.",
)
API_KEY_FORM = form({"apiKey": {"type": "string"}}, message="Need your key", tool_call_id=None)


async def _answer(start_agentctl, connect, scripted, params, answers, **respond) -> tuple[dict, dict]:
    """One form, answered; return (respond's payload, the ACP result the agent received)."""
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    answer = await run.respond(requested["pending_id"], answers, **respond)
    await run.finished()
    (received,) = run.echoed()
    assert received["id"] == 0
    return answer, received["result"]


async def _announced(start_agentctl, connect, scripted, params) -> dict:
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    return await run.requested()


# Capability and wiring -----------------------------------------------------


async def test_AC_01_flag_on_advertises_elicitation_form_as_an_object(start_agentctl, connect, scripted) -> None:
    client, _ = await connect(await start_agentctl(scripted.argv([])))
    await open_session(client, elicitation=True)
    (initialize,) = scripted.received("initialize")
    assert initialize["params"]["clientCapabilities"]["elicitation"] == {"form": {}}
    assert "url" not in initialize["params"]["clientCapabilities"]["elicitation"]


async def test_AC_03_elicitation_create_reaches_the_handler_and_blocks(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    # Parked, not answered: no -32601, no decline; the agent is still waiting.
    assert await run.client.request("agent.elicitations.list") == {"pending": [requested]}
    assert run.echoed() == []
    await run.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    await run.finished()
    (received,) = run.echoed()
    assert "error" not in received
    assert received["result"] == {"action": "accept", "content": {"question_0": "Red"}}


async def test_the_announcement_has_the_contracts_shape(start_agentctl, connect, scripted) -> None:
    requested = await _announced(start_agentctl, connect, scripted, COLOUR_FORM)
    assert set(requested) == {
        "pending_id",
        "session_id",
        "tool_call_id",
        "message",
        "created_at",
        "expires_at",
        "questions",
    }
    assert (requested["session_id"], requested["tool_call_id"], requested["message"]) == (
        SESSION,
        "toolu_1",
        "Pick a colour",
    )
    assert requested["questions"] == [
        {
            "id": "question_0",
            "title": "Colour",
            "prompt": "Pick a colour",
            "kind": "single",
            "accepts_text": True,
            "sensitive": False,
            "options": [
                {"id": "Red", "label": "Red", "description": "The warm one."},
                {"id": "Blue", "label": "Blue", "description": "The cool one."},
                {"id": "Green", "label": "Green", "description": None},
            ],
        }
    ]
    created = datetime.fromisoformat(requested["created_at"])
    expires = datetime.fromisoformat(requested["expires_at"])
    assert requested["created_at"].endswith("Z")
    assert requested["expires_at"].endswith("Z")
    assert expires - created == timedelta(minutes=55)  # the default answer timeout
    assert abs(datetime.now(created.tzinfo) - created) < timedelta(minutes=1)


# Mapping, as the operator sees it ---------------------------------------------


async def test_AC_04_one_oneof_question_with_a_companion_is_one_question(start_agentctl, connect, scripted) -> None:
    (question,) = (await _announced(start_agentctl, connect, scripted, COLOUR_FORM))["questions"]
    assert question["id"] == "question_0"
    assert [option["id"] for option in question["options"]] == ["Red", "Blue", "Green"]
    assert question["accepts_text"] is True


async def test_AC_04a_the_mcp_api_key_form_is_one_free_text_question(start_agentctl, connect, scripted) -> None:
    requested = await _announced(start_agentctl, connect, scripted, API_KEY_FORM)
    assert requested["tool_call_id"] is None
    assert requested["questions"] == [
        {
            "id": "apiKey",
            "title": None,
            "prompt": "Need your key",
            "kind": "text",
            "accepts_text": True,
            "sensitive": True,
            "options": [],
        }
    ]


async def test_AC_05_with_two_questions_each_prompt_is_its_description(start_agentctl, connect, scripted) -> None:
    questions = (await _announced(start_agentctl, connect, scripted, TWO_QUESTIONS))["questions"]
    assert [q["prompt"] for q in questions] == ["Which colour?", "Which environments?"]


async def test_AC_06_a_lone_question_without_description_is_prompted_by_the_message(
    start_agentctl, connect, scripted
) -> None:
    params = form({"question_0": single(title="Colour")}, message="Which colour do you like best?")
    (question,) = (await _announced(start_agentctl, connect, scripted, params))["questions"]
    assert question["prompt"] == "Which colour do you like best?"


async def test_AC_07_a_multi_select_property_is_one_multi_select_question(start_agentctl, connect, scripted) -> None:
    questions = (await _announced(start_agentctl, connect, scripted, TWO_QUESTIONS))["questions"]
    envs = questions[1]
    assert (envs["id"], envs["kind"]) == ("question_1", "multi")
    assert envs["options"] == [{"id": e["const"], "label": e["title"], "description": None} for e in ENVS]


async def test_AC_12c_the_refusal_fallback_dialog(start_agentctl, connect, scripted) -> None:
    message = "Fable declined this request (safety). Retry with Opus?\n\nYou can rephrase instead."
    options = [
        {"const": "retry_fallback", "title": "Retry with Opus", "description": "The session continues on Opus."},
        {"const": "cancelled", "title": "Keep the refusal"},
    ]
    params = form({"choice": single(options)}, message=message, tool_call_id=None)
    run = await run_script(start_agentctl, connect, scripted, ask(params))
    requested = await run.requested()
    (question,) = requested["questions"]
    assert (question["prompt"], question["title"], question["accepts_text"]) == (message, None, False)
    assert [option["id"] for option in question["options"]] == ["retry_fallback", "cancelled"]
    await run.respond(requested["pending_id"], [{"question_id": "choice", "selected_options": ["retry_fallback"]}])
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "accept", "content": {"choice": "retry_fallback"}}


async def test_AC_12d_questions_are_announced_in_D1_order_whatever_the_declaration_order(
    start_agentctl, connect, scripted
) -> None:
    keys = [f"question_{n}" for n in range(11)]
    shuffle = random.Random(1234)
    forms = []
    for _ in range(100):
        shuffle.shuffle(keys)
        forms.append(form({key: single(description=f"About {key}?") for key in keys}))
    assert len({json.dumps(list(f["requestedSchema"]["properties"])) for f in forms}) > 50
    steps = in_a_turn(
        *({"send": elicit(n, params)} for n, params in enumerate(forms)),
        {"expect": "session/cancel"},
        stop="cancelled",
    )
    run = await run_script(start_agentctl, connect, scripted, steps)
    expected = [f"question_{n}" for n in range(11)]
    assert d1_sorted(expected) == expected
    for _ in forms:
        requested = await run.requested()
        assert [q["id"] for q in requested["questions"]] == expected
    assert expected.index("question_2") < expected.index("question_10")
    await run.client.request("agent.cancel", {"session_id": run.session_id})
    assert (await run.finished())["stop_reason"] == "cancelled"
    assert len(run.inbox.all("elicitation.settled")) == 100


async def test_AC_12e_a_companion_naming_no_question_is_ignored(start_agentctl, connect, scripted) -> None:
    params = form({"question_0": single(), "question_9_custom": companion("question_9")})
    (question,) = (await _announced(start_agentctl, connect, scripted, params))["questions"]
    assert (question["id"], question["accepts_text"]) == ("question_0", False)


# Answers, as the agent receives them ---------------------------------------------


async def test_AC_10_a_selected_option_is_sent_under_the_schemas_own_key(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "question_0", "selected_options": ["Blue"], "custom_text": ""}]
    answer, result = await _answer(start_agentctl, connect, scripted, COLOUR_FORM, answers)
    assert result == {"action": "accept", "content": {"question_0": "Blue"}}
    assert answer == {"success": True, **result}


async def test_AC_11_free_text_goes_to_the_companion_found_by_its_marker(start_agentctl, connect, scripted) -> None:
    params = form({"question_0": single(), "answer_freeform": companion("question_0")})
    answers = [{"question_id": "question_0", "selected_options": [], "custom_text": "Teal"}]
    _, result = await _answer(start_agentctl, connect, scripted, params, answers)
    assert result == {"action": "accept", "content": {"answer_freeform": "Teal"}}


async def test_AC_11a_free_text_for_the_api_key_question_goes_to_its_own_key(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "apiKey", "custom_text": "T"}]
    _, result = await _answer(start_agentctl, connect, scripted, API_KEY_FORM, answers)
    assert result == {"action": "accept", "content": {"apiKey": "T"}}


async def test_a_typed_secret_reaches_the_agent_and_is_not_reported_back(start_agentctl, connect, scripted) -> None:
    """docs/decisions/operator.md#secrets: the value goes to the agent, the web app hears only that it was sent."""
    run = await run_script(start_agentctl, connect, scripted, ask(API_KEY_FORM))
    requested = await run.requested()
    answer = await run.respond(requested["pending_id"], [{"question_id": "apiKey", "custom_text": "sk-live-42"}])
    settled = await run.settled(requested["pending_id"])
    await run.finished()
    (received,) = run.echoed()
    assert received["result"] == {"action": "accept", "content": {"apiKey": "sk-live-42"}}
    assert answer == {"success": True, "action": "accept", "content": {}, "withheld": ["apiKey"]}
    assert (settled["content"], settled["withheld"]) == ({}, ["apiKey"])


async def test_AC_12_two_selected_options_are_a_json_array(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "question_1", "selected_options": ["dev", "prod"]}]
    _, result = await _answer(start_agentctl, connect, scripted, TWO_QUESTIONS, answers)
    assert result == {"action": "accept", "content": {"question_1": ["dev", "prod"]}}


async def test_AC_12a_free_text_with_a_selection_is_trimmed_into_the_companion(
    start_agentctl, connect, scripted
) -> None:
    answers = [{"question_id": "question_0", "selected_options": ["Red"], "custom_text": "  CockroachDB  "}]
    _, result = await _answer(start_agentctl, connect, scripted, COLOUR_FORM, answers)
    assert result == {"action": "accept", "content": {"question_0_custom": "CockroachDB"}}


async def test_AC_12b_an_empty_submission_is_accept_with_empty_content(start_agentctl, connect, scripted) -> None:
    answer, result = await _answer(start_agentctl, connect, scripted, TWO_QUESTIONS, [])
    assert result == {"action": "accept", "content": {}}
    assert answer == {"success": True, "action": "accept", "content": {}}


async def test_AC_12f_identical_requests_are_two_pendings_answered_one_at_a_time(
    start_agentctl, connect, scripted
) -> None:
    steps = in_a_turn({"send": elicit(0, COLOUR_FORM)}, {"send": elicit(1, COLOUR_FORM)}, *answered(0, 1))
    run = await run_script(start_agentctl, connect, scripted, steps)
    first, second = await run.requested(), await run.requested()
    assert first["pending_id"] != second["pending_id"]
    assert first["questions"] == second["questions"]
    await run.respond(first["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    assert (await run.settled())["pending_id"] == first["pending_id"]
    assert await run.client.request("agent.elicitations.list") == {"pending": [second]}
    await run.respond(second["pending_id"], [{"question_id": "question_0", "selected_options": ["Blue"]}])
    await run.finished()
    assert [(frame["id"], frame["result"]["content"]) for frame in run.echoed()] == [
        (0, {"question_0": "Red"}),
        (1, {"question_0": "Blue"}),
    ]


async def test_AC_12g_a_second_answer_is_not_found_and_the_agent_sees_one_response(
    start_agentctl, connect, scripted
) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    pending_id = requested["pending_id"]
    await run.respond(pending_id, [{"question_id": "question_0", "selected_options": ["Red"]}])
    with pytest.raises(NotFound):
        await run.respond(pending_id, [{"question_id": "question_0", "selected_options": ["Blue"]}])
    with pytest.raises(NotFound):
        await run.respond(pending_id, rejected=True)
    await run.finished()
    await run.agentctl.stop()  # the agent reads until its stdin closes: all it was ever sent
    assert answers_read(scripted, 0) == [
        {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"question_0": "Red"}}}
    ]
    assert len(run.inbox.all("elicitation.settled")) == 1


async def test_the_winning_answer_s_ref_is_echoed_in_its_settlement(start_agentctl, connect, scripted) -> None:
    """A client hearing the settlement on another connection learns which of the racing answers won."""
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    pending_id = (await run.requested())["pending_id"]
    answer = {"pending_id": pending_id, "answers": [{"question_id": "question_0", "selected_options": ["Red"]}]}
    await run.client.request("agent.elicitations.respond", {**answer, "answer_ref": "first"})
    with pytest.raises(NotFound):
        await run.client.request("agent.elicitations.respond", {**answer, "answer_ref": "second"})
    await run.finished()
    [settled] = run.inbox.all("elicitation.settled")
    assert (settled["reason"], settled["answer_ref"]) == ("operator", "first")


async def test_AC_12h_only_the_answered_question_has_a_key(start_agentctl, connect, scripted) -> None:
    params = form(
        {
            "question_0": single(description="First?"),
            "question_1": single(description="Second?"),
            "question_2": {"type": "string", "description": "Third?"},
        }
    )
    answers = [
        {"question_id": "question_0", "selected_options": [], "custom_text": ""},
        {"question_id": "question_1", "selected_options": ["Green"], "custom_text": ""},
        {"question_id": "question_2", "selected_options": [], "custom_text": "   "},
    ]
    _, result = await _answer(start_agentctl, connect, scripted, params, answers)
    assert result == {"action": "accept", "content": {"question_1": "Green"}}


async def test_AC_12i_text_and_a_selection_send_only_the_companion(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "question_1", "selected_options": ["dev", "prod"], "custom_text": "qa"}]
    _, result = await _answer(start_agentctl, connect, scripted, TWO_QUESTIONS, answers)
    assert result == {"action": "accept", "content": {"question_1_custom": "qa"}}


async def test_AC_12j_whitespace_only_text_without_a_selection_is_no_answer(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "question_0", "selected_options": [], "custom_text": " \t\n "}]
    _, result = await _answer(start_agentctl, connect, scripted, COLOUR_FORM, answers)
    assert result == {"action": "accept", "content": {}}


async def test_AC_13_the_answer_ends_the_same_prompt(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    assert run.inbox.all("turn.completed") == []
    await run.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    completed = await run.finished()
    assert (completed["turn_id"], completed["stop_reason"]) == (run.turn_id, "end_turn")
    assert len(scripted.received("session/prompt")) == 1
    actions = run.inbox.actions()
    assert actions.index("elicitation.settled") < actions.index("turn.completed")


async def test_AC_14_skip_answers_decline(start_agentctl, connect, scripted) -> None:
    # With rejected set, the answers are ignored, even ones that would not validate.
    junk = [{"question_id": "nope", "selected_options": ["x"]}]
    answer, result = await _answer(start_agentctl, connect, scripted, COLOUR_FORM, junk, rejected=True)
    assert result == {"action": "decline"}
    assert answer == {"success": True, "action": "decline"}


async def test_AC_15_cancelling_the_turn_answers_cancel_and_withdraws_the_pending(
    start_agentctl, connect, scripted
) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM, stop="cancelled"))
    requested = await run.requested()
    await run.client.request("agent.cancel", {"session_id": run.session_id})
    settled = await run.settled()
    assert settled == {
        "pending_id": requested["pending_id"],
        "session_id": SESSION,
        "outcome": "cancelled",
        "reason": "turn_cancelled",
    }
    assert await run.client.request("agent.elicitations.list") == {"pending": []}
    assert (await run.finished())["stop_reason"] == "cancelled"
    assert run.echoed()[0]["result"] == {"action": "cancel"}
    with pytest.raises(NotFound):
        await run.respond(requested["pending_id"], rejected=True)


async def test_AC_55_selections_go_out_in_declaration_order_not_click_order(start_agentctl, connect, scripted) -> None:
    answers = [{"question_id": "question_1", "selected_options": ["prod", "dev"]}]
    answer, result = await _answer(start_agentctl, connect, scripted, TWO_QUESTIONS, answers)
    assert result == {"action": "accept", "content": {"question_1": ["dev", "prod"]}}
    assert answer["content"] == {"question_1": ["dev", "prod"]}


async def test_F12_selections_are_deduplicated_and_answers_reordered(start_agentctl, connect, scripted) -> None:
    answers = [
        {"question_id": "question_1", "selected_options": ["prod", "dev", "prod", "dev"]},
        {"question_id": "question_0", "selected_options": ["Blue", "Blue"]},
    ]
    _, result = await _answer(start_agentctl, connect, scripted, TWO_QUESTIONS, answers)
    assert result == {"action": "accept", "content": {"question_0": "Blue", "question_1": ["dev", "prod"]}}
    assert list(result["content"]) == ["question_0", "question_1"]


# Declined at once, announced to nobody --------------------------------------------


def _decline_steps(*params: dict) -> list[dict]:
    sends = [{"send": elicit(n, p)} for n, p in enumerate(params)]
    return in_a_turn(*sends, *answered(*range(len(params))))


async def _assert_all_declined(run, count: int) -> None:
    await run.finished()
    assert [frame["result"] for frame in run.echoed()] == [{"action": "decline"}] * count
    assert run.events() == []
    assert await run.client.request("agent.elicitations.list") == {"pending": []}


async def test_AC_16_url_mode_is_declined(start_agentctl, connect, scripted) -> None:
    url = {"mode": "url", "sessionId": SESSION, "message": "Log in", "url": "https://example.com", "elicitationId": "e"}
    no_mode = {key: value for key, value in COLOUR_FORM.items() if key != "mode"}
    steps = _decline_steps(url, {**COLOUR_FORM, "mode": "url"}, no_mode)
    run = await run_script(start_agentctl, connect, scripted, steps)
    await _assert_all_declined(run, 3)


async def test_AC_17_a_request_scoped_elicitation_is_declined(start_agentctl, connect, scripted) -> None:
    request_scoped = {key: value for key, value in COLOUR_FORM.items() if key != "sessionId"}
    request_scoped["requestId"] = 7
    both = {**COLOUR_FORM, "requestId": 7}
    run = await run_script(start_agentctl, connect, scripted, _decline_steps(request_scoped, both))
    await _assert_all_declined(run, 2)


async def test_AC_18_a_schema_without_questions_is_declined(start_agentctl, connect, scripted) -> None:
    empty = form({})
    unrecognised = form(
        {"z": {"type": "null"}, "deep": {"type": "array", "items": {"type": "array"}}, "o": {"type": "object"}}
    )
    no_properties = {**COLOUR_FORM, "requestedSchema": {"type": "object"}}
    no_schema = {key: value for key, value in COLOUR_FORM.items() if key != "requestedSchema"}
    only_a_companion = form({"question_0_custom": companion("question_0")})
    run = await run_script(
        start_agentctl,
        connect,
        scripted,
        _decline_steps(empty, unrecognised, no_properties, no_schema, only_a_companion),
    )
    await _assert_all_declined(run, 5)


async def test_malformed_requests_are_declined(start_agentctl, connect, scripted) -> None:
    malformed = [
        None,
        [COLOUR_FORM],
        "form",
        {**COLOUR_FORM, "sessionId": 5},
        {**COLOUR_FORM, "message": ["x"]},
        {**COLOUR_FORM, "requestedSchema": {"type": "array", "properties": {}}},
        {**COLOUR_FORM, "requestedSchema": {"type": "object", "properties": []}},
    ]
    run = await run_script(start_agentctl, connect, scripted, _decline_steps(*malformed))
    await _assert_all_declined(run, len(malformed))


async def test_over_the_limits_is_declined(start_agentctl, connect, scripted) -> None:
    too_many_properties = form({f"q{n}": {"type": "string"} for n in range(65)})
    too_many_options = form({"q": single([{"const": f"o{n}", "title": f"o{n}"} for n in range(257)])})
    too_large = form({"q": {"type": "string", "description": "x" * (1 << 20)}})
    run = await run_script(
        start_agentctl, connect, scripted, _decline_steps(too_many_properties, too_many_options, too_large)
    )
    await _assert_all_declined(run, 3)


async def test_at_the_limits_is_not_declined(start_agentctl, connect, scripted) -> None:
    params = form(
        {
            **{f"q{n}": {"type": "string"} for n in range(63)},
            "many": single([{"const": f"o{n}", "title": f"o{n}"} for n in range(256)]),
        }
    )
    requested = await _announced(start_agentctl, connect, scripted, params)
    assert len(requested["questions"]) == 64


async def test_an_unknown_session_is_declined(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, _decline_steps(form({"q": single()}, session_id="other")))
    await _assert_all_declined(run, 1)


async def test_AC_20_flag_off_declines_a_well_formed_form(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, _decline_steps(COLOUR_FORM, API_KEY_FORM), flag=False)
    await run.finished()
    assert [frame["result"] for frame in run.echoed()] == [{"action": "decline"}] * 2
    # Nobody is asked; the web app is only told that a question was declined, and where (no question text).
    declined = ("elicitation.declined", {"session_id": SESSION, "reason": "elicitation_off"})
    assert run.events() == [declined, declined]
    assert await run.client.request("agent.elicitations.list") == {"pending": []}
    (initialize,) = scripted.received("initialize")
    assert "elicitation" not in initialize["params"]["clientCapabilities"]


async def test_flag_off_an_unknown_sessions_form_is_declined_and_reported_to_nobody(
    start_agentctl, connect, scripted
) -> None:
    steps = _decline_steps(form({"q": single()}, session_id="other"))
    run = await run_script(start_agentctl, connect, scripted, steps, flag=False)
    await _assert_all_declined(run, 1)


async def test_AC_20b_answers_travel_on_the_stream_and_no_acp_http_route_exists(
    start_agentctl, connect, scripted
) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    port = int(run.agentctl.url.split(":")[2].split("/")[0])
    for request_line in (
        "GET /api/v1/acp/elicitations/respond HTTP/1.1",
        "POST /api/v1/acp/elicitations/respond HTTP/1.1",
        "POST /api/v1/acp/permissions/respond HTTP/1.1",
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        headers = f"Host: 127.0.0.1\r\nAuthorization: Bearer {run.agentctl.token}\r\nContent-Length: 0\r\n\r\n"
        writer.write(f"{request_line}\r\n{headers}".encode())
        status_line = await asyncio.wait_for(reader.readline(), 5)
        writer.close()
        assert status_line.startswith(b"HTTP/1.1 404"), request_line
    # Still pending: the HTTP attempts reached nothing.
    assert await run.client.request("agent.elicitations.list") == {"pending": [requested]}
    await run.respond(requested["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "accept", "content": {"question_0": "Red"}}


# Identity, validation, concurrency -----------------------------------------------


async def test_AC_60_pending_ids_are_distinct_uuid4s_across_requests_and_processes(
    start_agentctl, connect, scripted
) -> None:
    ids = []
    for _ in range(2):  # two agentctl processes
        steps = in_a_turn(*({"send": elicit(n, COLOUR_FORM)} for n in range(3)), *answered(0, 1, 2))
        run = await run_script(start_agentctl, connect, scripted, steps)
        for _ in range(3):
            ids.append((await run.requested())["pending_id"])
        await run.agentctl.stop()
    assert all(uuid.UUID(pending_id).version == 4 for pending_id in ids)
    assert all(str(uuid.UUID(pending_id)) == pending_id for pending_id in ids)
    assert len(set(ids)) == 6


F10_CASES = {
    "unknown question": (
        [{"question_id": "question_9", "selected_options": ["Red"]}],
        [{"code": "unknown_question", "index": 0, "question_id": "question_9", "option_id": None}],
    ),
    "duplicated question": (
        [{"question_id": "question_0", "selected_options": ["Red"]}, {"question_id": "question_0"}],
        [{"code": "duplicate_question", "index": 1, "question_id": "question_0", "option_id": None}],
    ),
    "two options on a single-select": (
        [{"question_id": "question_0", "selected_options": ["Red", "Blue"]}],
        [{"code": "too_many_options", "index": 0, "question_id": "question_0", "option_id": None}],
    ),
    "an option that is no const": (
        [{"question_id": "question_1", "selected_options": ["dev", "qa"]}],
        [{"code": "unknown_option", "index": 0, "question_id": "question_1", "option_id": "qa"}],
    ),
    "text where none is accepted": (
        [{"question_id": "question_2", "custom_text": "why not"}],
        [{"code": "text_not_accepted", "index": 0, "question_id": "question_2", "option_id": None}],
    ),
    "text over 10,000 characters": (
        [{"question_id": "question_0", "custom_text": "x" * 10_001}],
        [{"code": "text_too_long", "index": 0, "question_id": "question_0", "option_id": None}],
    ),
    "answers that are not a list": (
        {"question_0": "Red"},
        [{"code": "answers_not_a_list", "index": None, "question_id": None, "option_id": None}],
    ),
    "malformed entries": (
        ["Red", {"selected_options": ["Red"]}, {"question_id": "question_0", "selected_options": "Red"}],
        [
            {"code": "answer_not_an_object", "index": 0, "question_id": None, "option_id": None},
            {"code": "bad_question_id", "index": 1, "question_id": None, "option_id": None},
            {"code": "bad_selected_options", "index": 2, "question_id": "question_0", "option_id": None},
        ],
    ),
}
F10_FORM = form(
    {
        "question_0": single(),
        "question_0_custom": companion("question_0"),
        "question_1": multi(),
        "question_2": single([{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}]),
    }
)


@pytest.mark.parametrize("case", list(F10_CASES))
async def test_F10_invalid_answers_leave_the_pending_open_and_a_valid_one_then_wins(
    start_agentctl, connect, scripted, case: str
) -> None:
    answers, problems = F10_CASES[case]
    run = await run_script(start_agentctl, connect, scripted, ask(F10_FORM))
    requested = await run.requested()
    payload = {"pending_id": requested["pending_id"], "answers": answers, "rejected": False, "reject_reason": ""}
    with pytest.raises(ValidationFailed) as refused:
        await run.client.request("agent.elicitations.respond", payload)
    said = refused.value.details["problems"]
    assert [{key: value for key, value in p.items() if key != "message"} for p in said] == problems
    # Each problem is also a sentence (docs/agent-stream.md#agentelicitationsrespond).
    assert all(isinstance(p["message"], str) and p["message"].endswith(".") for p in said)
    assert await run.client.request("agent.elicitations.list") == {"pending": [requested]}
    assert run.events() == [("elicitation.requested", requested)]
    await run.respond(requested["pending_id"], [{"question_id": "question_2", "selected_options": ["no"]}])
    await run.finished()
    assert run.echoed()[0]["result"] == {"action": "accept", "content": {"question_2": "no"}}


@pytest.mark.parametrize(
    ("payload", "codes"),
    [
        ({"answers": []}, ["bad_pending_id"]),
        ({"pending_id": 5, "answers": []}, ["bad_pending_id"]),
        ({"pending_id": "", "answers": []}, ["bad_pending_id"]),
        ({"pending_id": "p", "answers": [], "rejected": "yes"}, ["bad_rejected"]),
        ({"pending_id": "p", "answers": [], "rejected": False, "reject_reason": 3}, ["bad_reject_reason"]),
        ({"pending_id": "p", "answers": [], "answer_ref": 7}, ["bad_answer_ref"]),
        ({"pending_id": "p", "answers": [], "answer_ref": ""}, ["bad_answer_ref"]),
        ({"pending_id": "p", "answers": [], "answer_ref": "r" * 65}, ["bad_answer_ref"]),
    ],
)
async def test_a_malformed_respond_payload_is_a_validation_error(
    start_agentctl, connect, scripted, payload: dict, codes: list[str]
) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    await run.requested()
    with pytest.raises(ValidationFailed) as refused:
        await run.client.request("agent.elicitations.respond", payload)
    assert [problem["code"] for problem in refused.value.details["problems"]] == codes


async def test_an_unknown_pending_id_is_not_found(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    await run.requested()
    with pytest.raises(NotFound):
        await run.respond(str(uuid.uuid4()), [])
    # An unknown id is NOT_FOUND even with answers that would not validate.
    with pytest.raises(NotFound):
        await run.respond(str(uuid.uuid4()), [{"question_id": "nope"}])


async def test_D3_two_pendings_on_one_session_are_answered_independently(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit("a", COLOUR_FORM)}, {"send": elicit("b", API_KEY_FORM)}, *answered("b", "a"))
    run = await run_script(start_agentctl, connect, scripted, steps)
    colour, key = await run.requested(), await run.requested()
    listed = await run.client.request("agent.elicitations.list")
    assert listed == {"pending": [colour, key]}
    await run.respond(key["pending_id"], [{"question_id": "apiKey", "custom_text": "sk-1"}])
    assert (await run.settled())["pending_id"] == key["pending_id"]
    assert await run.client.request("agent.elicitations.list") == {"pending": [colour]}
    await run.respond(colour["pending_id"], rejected=True)
    await run.finished()
    assert [(frame["id"], frame["result"]) for frame in run.echoed()] == [
        ("b", {"action": "accept", "content": {"apiKey": "sk-1"}}),
        ("a", {"action": "decline"}),
    ]


async def test_of_twenty_concurrent_answers_exactly_one_wins(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(TWO_QUESTIONS))
    other, _ = await connect(run.agentctl)
    requested = await run.requested()
    options = ["dev", "staging", "prod"]
    answers = [
        (run.client if n % 2 else other).request(
            "agent.elicitations.respond",
            {
                "pending_id": requested["pending_id"],
                "answers": [{"question_id": "question_1", "selected_options": [options[n % 3]]}],
                "rejected": n == 7,
                "reject_reason": "",
            },
        )
        for n in range(20)
    ]
    results = await asyncio.gather(*answers, return_exceptions=True)
    winners = [result for result in results if isinstance(result, dict)]
    assert len(winners) == 1
    assert sum(isinstance(result, NotFound) for result in results) == 19
    await run.finished()
    await run.agentctl.stop()
    (sent,) = answers_read(scripted, 0)
    (winner,) = winners
    assert {"success": True, **sent["result"]} == winner
    assert len(run.inbox.all("elicitation.settled")) == 1


async def test_id_0_and_string_ids_are_both_the_agents_requests(start_agentctl, connect, scripted) -> None:
    steps = in_a_turn({"send": elicit(0, COLOUR_FORM)}, {"send": elicit("0", COLOUR_FORM)}, *answered(0, "0"))
    run = await run_script(start_agentctl, connect, scripted, steps)
    by_int, by_str = await run.requested(), await run.requested()
    await run.respond(by_int["pending_id"], [{"question_id": "question_0", "selected_options": ["Red"]}])
    await run.respond(by_str["pending_id"], [{"question_id": "question_0", "selected_options": ["Blue"]}])
    await run.finished()
    assert [(frame["id"], frame["result"]["content"]) for frame in run.echoed()] == [
        (0, {"question_0": "Red"}),
        ("0", {"question_0": "Blue"}),
    ]


async def test_a_client_that_connects_later_resyncs_with_list(start_agentctl, connect, scripted) -> None:
    run = await run_script(start_agentctl, connect, scripted, ask(COLOUR_FORM))
    requested = await run.requested()
    late, late_inbox = await connect(run.agentctl)
    assert await late.request("agent.elicitations.list") == {"pending": [requested]}
    await late.request(
        "agent.elicitations.respond",
        {"pending_id": requested["pending_id"], "answers": [], "rejected": True, "reject_reason": "busy"},
    )
    # Every client hears the settlement, the one that answered and the first.
    assert (await late_inbox.next("elicitation.settled"))["reason"] == "operator_skipped"
    assert (await run.settled())["reason"] == "operator_skipped"
