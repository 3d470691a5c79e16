"""Reading and writing envelopes; what a refused frame echoes back."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

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
    assert isinstance(sent["id"], str) and sent["id"]


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
    data = envelope.notification("session.update", {"padding": "x" * envelope.MAX_FRAME_BYTES})
    assert envelope.decode(data).action == "session.update"
