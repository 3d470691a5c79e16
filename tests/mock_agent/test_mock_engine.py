"""The scenario engine on its own: loading, templates, chunks, and cancel in every scenario."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kandev_web.mock_agent import engine
from kandev_web.mock_agent.engine import ScenarioError, Turn, check_steps, load_scenario, play, scenario_names

SCENARIOS = ["crash", "long-stream", "permission-flow", "reply", "simple-message", "tool-calls"]


class FakePeer:
    """Records what a turn sends; requests are answered by ``answer`` (or never)."""

    def __init__(self, *, answer: Any = None, cancel_after: int | None = None) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.cancelled = asyncio.Event()
        self._answer = answer
        self._cancel_after = cancel_after
        self._ids = iter(range(100))

    def notify(self, method: str, params: Any) -> None:
        self._record(method, params)

    def send_request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        self._record(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._answer is not None:
            future.set_result(self._answer)
        return next(self._ids), future

    async def drain(self) -> None:
        return None

    def _record(self, method: str, params: Any) -> None:
        self.sent.append((method, params))
        if self._cancel_after is not None and len(self.sent) >= self._cancel_after:
            self.cancelled.set()


def _turn(peer: FakePeer, **variables: Any) -> Turn:
    return Turn(peer=peer, session_id="s", cancelled=peer.cancelled, variables={"session_id": "s", **variables})  # type: ignore[arg-type]


def test_the_bundled_scenarios_all_load() -> None:
    assert scenario_names() == SCENARIOS
    for name in SCENARIOS:
        assert load_scenario(name)


@pytest.mark.parametrize("name", ["nope", "../reply", "Reply", "", "reply.json"])
def test_unknown_or_odd_names_are_no_scenario(name: str) -> None:
    with pytest.raises(ScenarioError):
        load_scenario(name)


@pytest.mark.parametrize(
    "steps",
    [
        None,
        [{"dance": 1}],
        [{"say": "a", "think": "b"}],
        ["say"],
        [{"repeat": {"times": 2, "steps": [{"dance": 1}]}}],
    ],
)
def test_malformed_steps_are_refused_before_playing(steps: Any) -> None:
    with pytest.raises(ScenarioError):
        check_steps(steps, where="test")


@pytest.mark.asyncio
@pytest.mark.parametrize("name", SCENARIOS)
async def test_every_scenario_honours_a_cancel_that_came_first(name: str) -> None:
    peer = FakePeer()
    peer.cancelled.set()
    assert await play(_turn(peer, prompt="p", turn="t"), load_scenario(name)) == "cancelled"
    assert peer.sent == []


@pytest.mark.asyncio
@pytest.mark.parametrize("name", SCENARIOS)
async def test_every_scenario_stops_sending_once_cancelled(name: str) -> None:
    peer = FakePeer(answer={"outcome": {"outcome": "cancelled"}}, cancel_after=1)
    assert await play(_turn(peer, prompt="p", turn="t"), load_scenario(name)) == "cancelled"
    assert len(peer.sent) == 1


@pytest.mark.asyncio
async def test_a_cancel_while_a_request_waits_withdraws_the_request() -> None:
    peer = FakePeer(cancel_after=1)  # never answers; cancelled once the request is out
    steps = [{"request": {"method": "elicitation/create", "params": {"sessionId": "{session_id}"}}}]
    assert await asyncio.wait_for(play(_turn(peer), steps), 5) == "cancelled"
    assert peer.sent == [("elicitation/create", {"sessionId": "s"}), ("$/cancel_request", {"requestId": 0})]


@pytest.mark.asyncio
async def test_a_request_stores_its_answer_for_later_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "SCENARIOS_DIR", tmp_path)
    (tmp_path / "form.json").write_text(json.dumps({"mode": "form", "sessionId": "from-file", "message": "Pick"}))
    peer = FakePeer(answer={"action": "accept", "content": {"question_0": "Red"}})
    steps = [
        {
            "request": {
                "method": "elicitation/create",
                "params_file": "form.json",
                "params": {"sessionId": "{session_id}"},
                "as": "answer",
            }
        },
        {"say": "You answered {answer.action}: {answer.content}"},
    ]
    assert await play(_turn(peer), steps) == "end_turn"
    assert peer.sent[0] == ("elicitation/create", {"mode": "form", "sessionId": "s", "message": "Pick"})
    said = "".join(params["update"]["content"]["text"] for _, params in peer.sent[1:])
    assert said == 'You answered accept: {"question_0": "Red"}'


@pytest.mark.asyncio
async def test_stop_ends_the_turn_with_its_reason() -> None:
    peer = FakePeer()
    assert await play(_turn(peer), [{"stop": "max_tokens"}, {"say": "never"}]) == "max_tokens"
    assert peer.sent == []


@pytest.mark.asyncio
async def test_repeat_numbers_its_rounds() -> None:
    peer = FakePeer()
    await play(_turn(peer), [{"repeat": {"times": 3, "steps": [{"say": "{i}/{n}"}]}}])
    assert [params["update"]["content"]["text"] for _, params in peer.sent] == ["0/1", "1/2", "2/3"]


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{prompt}", "hi"),
        ("{missing}", "none"),
        ("{result.outcome.optionId}", "yes"),
        ("{result.list.1}", "b"),
        ("{result.list.9}", "none"),
        ("{result.outcome}", '{"optionId": "yes"}'),
        ('{"json": "stays"} {not a placeholder}', '{"json": "stays"} {not a placeholder}'),
    ],
)
def test_templates(template: str, rendered: str) -> None:
    turn = _turn(FakePeer(), prompt="hi", result={"outcome": {"optionId": "yes"}, "list": ["a", "b"]})
    assert turn.render(template) == rendered
    assert turn.render({"k": [template, 1, None]}) == {"k": [rendered, 1, None]}


@pytest.mark.parametrize("text", ["", "one", "a few words here and there", "  spaced   out\n\nlines  "])
def test_chunks_join_back_into_the_text(text: str) -> None:
    chunks = engine._chunks(text)
    assert "".join(chunks) == text
    assert all(len(chunk.split()) <= 3 for chunk in chunks)
