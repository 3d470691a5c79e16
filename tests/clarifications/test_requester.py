"""Who the overlay says asks, for every request shape captured from the Claude bridge.

Each fixture goes the way a real one does: agentctl's mapping, its
announcement, the record the web app stores; then ``requester`` reads the record.
"""

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation.mapping import map_elicitation
from kandev_web.agentctl.elicitation.types import MappedForm
from kandev_web.clarifications.requester import Requester, requester

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-agent-acp"


def _fixture(name: str, *keys: str) -> dict:
    data = json.loads((FIXTURES / name).read_text())
    for key in keys:
        data = data[key]
    return data


def _who(params: dict) -> Requester | None:
    form = map_elicitation(params)
    assert isinstance(form, MappedForm)
    return requester(source="elicitation", tool_call_id=form.tool_call_id or "", questions=form.wire_questions())


REFUSAL_FALLBACKS = [
    ("0.65.0/wire_refusal_fallback_elicitation_0.65.0.json",),
    ("0.65.0/refusal_fallback.json", "request_full"),
    ("0.65.0/refusal_fallback.json", "request_minimal"),
    ("0.101.0/refusal_fallback.json", "request_full"),
    ("0.101.0/refusal_fallback.json", "request_minimal"),
]


@pytest.mark.parametrize("fixture", REFUSAL_FALLBACKS, ids=lambda f: "/".join(f))
def test_the_refusal_fallback_dialog_is_the_agent_offering_a_retry(fixture):
    assert _who(_fixture(*fixture)) == Requester.RETRY_OFFER


MCP_FORMS = [
    ("0.65.0/wire_mcp_apiKey_elicitation_0.65.0.json",),
    ("0.101.0/wire_mcp_apiKey_elicitation.json",),
    ("0.65.0/mcp_create_requests.json", "form_apiKey"),
    ("0.101.0/mcp_create_requests.json", "form_mode_explicit_with_required"),
]


@pytest.mark.parametrize("fixture", MCP_FORMS, ids=lambda f: "/".join(f))
def test_a_forwarded_mcp_form_names_only_the_agent(fixture):
    # Nothing in the frame says an MCP server asked (no server name, no toolCallId), so nothing is claimed.
    assert _who(_fixture(*fixture)) == Requester.AGENT


ASK_USER_QUESTION = [
    ("0.65.0/wire_single_question_elicitation_0.65.0.json",),
    ("0.65.0/wire_two_questions_elicitation_0.65.0.json",),
    ("0.101.0/wire_single_question_elicitation.json",),
    ("0.101.0/wire_two_questions_elicitation.json",),
    ("0.65.0/ask_single_request_no_toolcallid.json",),
    ("0.101.0/ask_single_request_no_toolcallid.json",),
    ("0.101.0/ask_noheader_request.json",),
]


@pytest.mark.parametrize("fixture", ASK_USER_QUESTION, ids=lambda f: "/".join(f))
def test_the_agents_own_questions_name_the_agent(fixture):
    assert _who(_fixture(*fixture)) == Requester.AGENT


def test_kandevs_own_tool_gets_no_requester_line():
    questions = [{"id": "choice", "options": [{"id": "retry_fallback"}, {"id": "cancelled"}]}]
    assert requester(source="ask_user_question", tool_call_id="", questions=questions) is None


def test_a_tool_calls_choice_between_the_same_words_is_no_retry_offer():
    params = _fixture("0.65.0/wire_refusal_fallback_elicitation_0.65.0.json")
    assert _who({**params, "toolCallId": "toolu_1"}) == Requester.AGENT


def _refusal_like(**changes) -> list[dict]:
    question = {
        "id": "choice",
        "title": "",
        "kind": "single",
        "accepts_text": False,
        "options": [{"id": "retry_fallback"}, {"id": "cancelled"}],
    }
    return [{**question, **changes}]


@pytest.mark.parametrize(
    "questions",
    [
        _refusal_like(id="question_0"),
        _refusal_like(title="Retry?"),
        _refusal_like(accepts_text=True),
        _refusal_like(kind="multi"),
        _refusal_like(options=[{"id": "retry_fallback"}]),
        _refusal_like(options=[{"id": "retry_fallback"}, {"id": "cancelled"}, {"id": "x"}]),
        _refusal_like() * 2,
    ],
)
def test_only_the_exact_shape_is_a_retry_offer(questions):
    assert requester(source="elicitation", tool_call_id="", questions=questions) == Requester.AGENT


@given(st.lists(st.text(max_size=16), max_size=4), st.text(max_size=8))
def test_a_retry_is_offered_only_between_exactly_its_two_choices_and_by_no_tool_call(option_ids, tool_call_id):
    questions = _refusal_like(options=[{"id": option_id} for option_id in option_ids])
    offered = requester(source="elicitation", tool_call_id=tool_call_id, questions=questions) == Requester.RETRY_OFFER
    assert offered == (not tool_call_id and sorted(option_ids) == ["cancelled", "retry_fallback"])
