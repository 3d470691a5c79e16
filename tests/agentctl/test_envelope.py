"""Reading and writing envelopes; what a refused frame echoes back."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl import envelope
from kandev_web.agentctl.envelope import BadFrame, ErrorCode, Frame, FrameType


def test_a_request_round_trips() -> None:
    frame = envelope.decode_request(envelope.request("agent.cancel", {"session_id": "s"}, id="r-1"))
    assert frame == Frame(id="r-1", type=FrameType.REQUEST, action="agent.cancel", payload={"session_id": "s"})


def test_a_response_repeats_the_request_id_and_action() -> None:
    request = Frame(id="r-1", type=FrameType.REQUEST, action="agent.prompt", payload={})
    sent = json.loads(envelope.response(request, {"turn_id": "t"}))
    assert sent["id"] == "r-1"
    assert sent["type"] == "response"
    assert sent["action"] == "agent.prompt"
    assert sent["payload"] == {"turn_id": "t"}


def test_an_error_has_code_message_and_details() -> None:
    sent = json.loads(envelope.error(ErrorCode.NOT_FOUND, "gone", id="r-2", action="agent.cancel"))
    assert sent["type"] == "error"
    assert sent["payload"] == {"code": "NOT_FOUND", "message": "gone", "details": {}}


def test_timestamps_are_rfc3339_utc() -> None:
    sent = json.loads(envelope.notification("agent.exited", {"exit_code": 0, "signal": None}))
    assert sent["timestamp"].endswith("Z")
    assert datetime.fromisoformat(sent["timestamp"]).utcoffset().total_seconds() == 0
    assert isinstance(sent["id"], str)
    assert sent["id"]


def test_a_missing_or_null_payload_reads_as_empty() -> None:
    assert envelope.decode_request('{"id": "a", "type": "request", "action": "x"}').payload == {}
    assert envelope.decode_request('{"id": "a", "type": "request", "action": "x", "payload": null}').payload == {}


@pytest.mark.parametrize(
    ("data", "echoed_id", "echoed_action"),
    [
        ("not json", None, None),
        ("[1, 2]", None, None),
        ('"a string"', None, None),
        (b'{"id": "a", "type": "request", "action": "x"}', None, None),
        ('{"id": "a", "type": "request", "action": "x", "payload": 5}', "a", "x"),
        ('{"id": "a", "action": "x"}', "a", "x"),
        ('{"id": "a", "type": "ask", "action": "x"}', "a", "x"),
        ('{"type": "request", "action": "x"}', None, "x"),
        ('{"id": "", "type": "request", "action": "x"}', "", "x"),
        ('{"id": 7, "type": "request", "action": "x"}', 7, "x"),
        ('{"id": true, "type": "request", "action": 3}', None, None),
        ('{"id": "a", "type": "request", "action": ""}', "a", ""),
        ('{"id": "a", "type": "response", "action": "x", "payload": {}}', "a", "x"),
    ],
)
def test_a_bad_frame_echoes_what_could_be_read(data: str | bytes, echoed_id: object, echoed_action: object) -> None:
    with pytest.raises(BadFrame) as refused:
        envelope.decode_request(data)
    assert refused.value.id == echoed_id
    assert refused.value.action == echoed_action
    assert refused.value.message


def test_a_frame_over_one_mebibyte_is_refused_but_named() -> None:
    data = envelope.request("agent.prompt", {"padding": "x" * envelope.MAX_FRAME_BYTES}, id="big")
    with pytest.raises(BadFrame, match="1048576 bytes") as refused:
        envelope.decode_request(data)
    assert (refused.value.id, refused.value.action) == ("big", "agent.prompt")


def test_clients_may_read_frames_over_the_limit() -> None:
    data = envelope.encode(
        FrameType.NOTIFICATION, "session.update", {"padding": "x" * envelope.MAX_FRAME_BYTES}, id="n"
    )
    assert envelope.decode(data).action == "session.update"


# Notifications over the limit: strings cut, shape kept -------------------------

LIMIT = 4096
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3000),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=30,
)


def dumped_size(payload: dict) -> int:
    return len(json.dumps(payload, ensure_ascii=False).encode())


def shape(value: object) -> object:
    """``value`` with every string replaced by the same placeholder."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return "<str>" if isinstance(value, str) else value


def strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return [value] if isinstance(value, str) else []


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_a_payload_over_the_limit_is_cut_to_fit_keeping_its_shape(payload: dict) -> None:
    fitted = envelope.shorten_to_fit(payload, dumped_size, LIMIT)
    if fitted is None:
        # Only when even the shortest cut of every string leaves it too big.
        minimal = {**_cut_everything(payload), "truncated": True}
        assert dumped_size(minimal) > LIMIT
        return
    assert dumped_size(fitted) <= LIMIT
    assert fitted.pop("truncated") is True
    assert shape(fitted) == shape(payload)
    for original, cut in zip(strings(payload), strings(fitted), strict=True):
        assert cut == original or (
            cut.endswith(envelope.TRUNCATION_MARK) and original.startswith(cut.removesuffix(envelope.TRUNCATION_MARK))
        )


def _cut_everything(value: object) -> object:
    mark_bytes = len(envelope.TRUNCATION_MARK.encode())
    if isinstance(value, dict):
        return {key: _cut_everything(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_everything(item) for item in value]
    if isinstance(value, str) and len(value.encode()) > mark_bytes:
        return envelope.TRUNCATION_MARK
    return value


def test_a_notification_over_one_mebibyte_is_sent_within_it_marked() -> None:
    text = "ü" * envelope.MAX_FRAME_BYTES  # two bytes each
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    data = envelope.notification("session.update", {"session_id": "s", "update": update})
    assert len(data.encode()) <= envelope.MAX_FRAME_BYTES
    payload = envelope.decode(data, max_bytes=envelope.MAX_FRAME_BYTES).payload
    assert payload["truncated"] is True
    assert payload["session_id"] == "s"
    cut = payload["update"]["content"]["text"]
    assert cut.endswith(envelope.TRUNCATION_MARK)
    assert text.startswith(cut.removesuffix(envelope.TRUNCATION_MARK))
    # Most of what fits is kept, not just a token prefix.
    assert len(cut.encode()) > envelope.MAX_FRAME_BYTES * 0.99


def test_a_notification_within_the_limit_is_untouched() -> None:
    payload = {"session_id": "s", "update": {"text": "x" * 1000}}
    assert envelope.decode(envelope.notification("session.update", payload)).payload == payload


# Sequence numbers ----------------------------------------------------------


def test_a_notification_carries_its_seq_and_reads_back_with_it() -> None:
    data = envelope.notification("turn.completed", {"session_id": "s"}, seq=42)
    assert json.loads(data)["seq"] == 42
    assert envelope.decode(data).seq == 42


def test_a_notification_sent_without_seq_has_none_on_the_wire() -> None:
    data = envelope.notification("stream.gap", {"after_seq": 1, "first_kept_seq": 5})
    assert "seq" not in json.loads(data)
    assert envelope.decode(data).seq is None


def test_a_cut_notification_keeps_its_seq_and_fits() -> None:
    payload = {"session_id": "s", "update": {"text": "x" * envelope.MAX_FRAME_BYTES}}
    data = envelope.notification("session.update", payload, seq=7)
    assert len(data.encode()) <= envelope.MAX_FRAME_BYTES
    assert envelope.decode(data).seq == 7


@given(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.lists(st.integers(), max_size=2)
)
def test_a_notification_whose_seq_is_no_positive_integer_is_read_with_seq_none(seq: object) -> None:
    data = json.dumps({"id": "n", "type": "notification", "action": "session.update", "payload": {}, "seq": seq})
    frame = envelope.decode(data)
    assert frame.action == "session.update"
    usable = isinstance(seq, int) and not isinstance(seq, bool) and seq > 0
    assert frame.seq == (seq if usable else None)


@pytest.mark.parametrize("type", ["response", "error"])
def test_only_notifications_have_a_seq(type: str) -> None:
    data = json.dumps({"id": "r", "type": type, "action": "agent.cancel", "payload": {}, "seq": 3})
    assert envelope.decode(data).seq is None
