"""The text limits (kandev_web/limits.py) fit the channels the text travels through, at their worst."""

import json

from hypothesis import given
from hypothesis import strategies as st

from kandev_web import limits
from kandev_web.agentctl import envelope
from kandev_web.clarifications.validation import Answer, parse_bundle, tool_result

#: Each the costliest character there is in compact JSON: escaped control, 4-byte UTF-8, a lone surrogate.
WORST = ["\x01", "\U0001f600", "\ud800"]


def _encoded_bytes(frame: str) -> int:
    return len(frame.encode("utf-8", "surrogatepass"))


def test_the_longest_prompt_fits_one_agent_stream_frame():
    for char in WORST:
        prompt = [{"type": "text", "text": char * limits.PROMPT_CHARS}]
        frame = envelope.request("agent.prompt", {"session_id": "s" * 200, "prompt": prompt}, id="r" * 64)
        assert _encoded_bytes(frame) <= envelope.MAX_FRAME_BYTES


@given(st.text(max_size=2000))
def test_no_character_costs_more_than_the_limits_assume(text):
    encoded = json.dumps(text, ensure_ascii=False)[1:-1]
    assert _encoded_bytes(encoded) <= limits.JSON_BYTES_PER_CHAR * len(text)


def test_the_largest_ask_result_fits_one_mcp_event_twice_over():
    """The SDK sends a tool's result as text and as structured content in the same event."""
    bundle = parse_bundle(
        [
            {"prompt": f"Question {n}?", "options": [{"label": label, "description": label} for label in "AB"]}
            for n in range(4)
        ]
    )
    for char in WORST:
        answers = tuple(Answer(q["id"], None, char * limits.ASK_ANSWER_CHARS) for q in bundle)
        result = tool_result(bundle, answers, rejected=True, reason=char * limits.SKIP_REASON_CHARS)
        text = json.dumps(result, indent=2)
        assert 2 * len(text.encode()) < 1 << 20


def test_a_description_is_never_longer_than_a_prompt():
    """The description is the default prompt of Start agent, so the default always goes through."""
    assert limits.TASK_DESCRIPTION_CHARS <= limits.PROMPT_CHARS
    assert limits.TASK_TITLE_CHARS <= limits.PROMPT_CHARS
