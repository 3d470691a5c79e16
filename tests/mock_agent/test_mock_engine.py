"""The scenario engine on its own: loading, templates, chunks, and cancel in every scenario."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from kandev_web.mock_agent import engine
from kandev_web.mock_agent.engine import ScenarioError, Turn, check_steps, load_scenario, play, scenario_names

SCENARIOS = [
    "crash",
    "elicit-eleven",
    "elicit-mcp-apikey",
    "elicit-refusal",
    "elicit-single",
    "elicit-then-cancel-request",
    "elicit-twice",
    "elicit-two",
    "long-stream",
    "permission-flow",
    "reply",
    "simple-message",
    "stream-chunks",
    "tool-calls",
]


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
    # Other modules register steps of their own; the agent imports them all.
    importlib.import_module("kandev_web.mock_agent.agent")
    assert set(SCENARIOS) <= set(scenario_names())
    for name in scenario_names():
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
        [{"parallel": []}],
        [{"parallel": "say"}],
        [{"parallel": [[{"say": "a"}], [{"dance": 1}]]}],
        [{"parallel": [{"say": "a"}]}],
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


class HoldingPeer(FakePeer):
    """Keeps each request's future for the test to answer; answers a withdrawn one ``cancel``, as agentctl does."""

    def __init__(self, *, cancel_after: int | None = None) -> None:
        super().__init__(cancel_after=cancel_after)
        self.open: dict[int, asyncio.Future[Any]] = {}
        self.changed = asyncio.Event()

    def send_request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        request_id, future = super().send_request(method, params)
        self.open[request_id] = future
        self.changed.set()
        return request_id, future

    def notify(self, method: str, params: Any) -> None:
        super().notify(method, params)
        if method == "$/cancel_request":
            future = self.open.get(params["requestId"])
            if future is not None and not future.done():
                future.set_result({"action": "cancel"})
        self.changed.set()

    async def until(self, condition: Any) -> None:
        async with asyncio.timeout(5):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


def _said(peer: FakePeer) -> str:
    return "".join(p["update"]["content"]["text"] for m, p in peer.sent if m == "session/update")


@pytest.mark.asyncio
async def test_a_request_unanswered_in_time_is_withdrawn_and_its_answer_still_awaited() -> None:
    peer = HoldingPeer()
    steps = [
        {"request": {"method": "elicitation/create", "params": {}, "as": "answer", "withdraw_after_ms": 10}},
        {"say": "Answer: {answer}"},
    ]
    assert await asyncio.wait_for(play(_turn(peer), steps), 5) == "end_turn"
    assert [method for method, _ in peer.sent][:2] == ["elicitation/create", "$/cancel_request"]
    assert peer.sent[1][1] == {"requestId": 0}
    assert _said(peer) == 'Answer: {"action": "cancel"}'


@pytest.mark.asyncio
async def test_a_request_answered_in_time_is_not_withdrawn() -> None:
    peer = FakePeer(answer={"action": "decline"})
    steps = [{"request": {"method": "elicitation/create", "params": {}, "withdraw_after_ms": 60_000}}]
    assert await play(_turn(peer), steps) == "end_turn"
    assert [method for method, _ in peer.sent] == ["elicitation/create"]


@pytest.mark.asyncio
async def test_parallel_branches_have_their_requests_in_flight_at_once() -> None:
    peer = HoldingPeer()
    steps = [
        {
            "parallel": [
                [{"request": {"method": "elicitation/create", "params": {"n": 1}, "as": "first"}}],
                [{"request": {"method": "elicitation/create", "params": {"n": 2}, "as": "second"}}],
            ]
        },
        {"say": "{first.n} {second.n}"},
    ]
    playing = asyncio.ensure_future(play(_turn(peer), steps))
    await peer.until(lambda: len(peer.open) == 2)
    peer.open[1].set_result({"n": "B"})  # the second is answered first; the first still waits
    peer.open[0].set_result({"n": "A"})
    assert await asyncio.wait_for(playing, 5) == "end_turn"
    assert [params for _, params in peer.sent[:2]] == [{"n": 1}, {"n": 2}]
    assert _said(peer) == "A B"


@pytest.mark.asyncio
async def test_a_cancel_withdraws_every_parallel_request() -> None:
    peer = HoldingPeer(cancel_after=2)
    branch = [{"request": {"method": "elicitation/create", "params": {}}}, {"say": "never"}]
    assert await asyncio.wait_for(play(_turn(peer), [{"parallel": [branch, branch]}]), 5) == "cancelled"
    withdrawn = sorted(params["requestId"] for method, params in peer.sent if method == "$/cancel_request")
    assert withdrawn == [0, 1]
    assert _said(peer) == ""


@pytest.mark.asyncio
async def test_a_stop_in_one_branch_ends_the_others() -> None:
    peer = FakePeer()
    steps = [{"parallel": [[{"sleep_ms": 60_000}, {"say": "never"}], [{"stop": "max_tokens"}]]}, {"say": "never"}]
    assert await asyncio.wait_for(play(_turn(peer), steps), 5) == "max_tokens"
    assert peer.sent == []


@pytest.mark.asyncio
async def test_write_file_writes_in_the_sessions_cwd_and_reports_the_edit_with_its_diff(tmp_path: Path) -> None:
    (tmp_path / "NOTES.md").write_text("old\n")
    peer = FakePeer()
    turn = Turn(peer=peer, session_id="s", cancelled=peer.cancelled, variables={"turn": "t"}, cwd=str(tmp_path))  # type: ignore[arg-type]

    assert await play(turn, load_scenario("edit-file")) == "end_turn"

    assert (tmp_path / "NOTES.md").read_text() == "# Notes\n\nWritten by the mock agent.\n"
    ((_, first), *_) = peer.sent
    assert first["update"]["kind"] == "edit"
    assert first["update"]["content"] == [
        {
            "type": "diff",
            "path": str(tmp_path / "NOTES.md"),
            "oldText": "old\n",
            "newText": (tmp_path / "NOTES.md").read_text(),
        }
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["../outside.txt", "/etc/outside.txt", "."])
async def test_write_file_never_writes_outside_the_sessions_cwd(tmp_path: Path, path: str) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    peer = FakePeer()
    turn = Turn(peer=peer, session_id="s", cancelled=peer.cancelled, cwd=str(cwd))  # type: ignore[arg-type]

    with pytest.raises(ScenarioError, match="is not a file inside the session's cwd"):
        await play(turn, [{"write_file": {"path": path, "text": "x"}}])

    assert not (tmp_path / "outside.txt").exists()
    assert peer.sent == []


@pytest.mark.asyncio
async def test_a_stream_sends_its_chunks_numbered_and_stamped_at_its_pace() -> None:
    peer = FakePeer()
    steps = [{"stream": {"chunks": "{args.0|9}", "per_second": "{args.1|50}", "text": "{n}@{now} "}}]
    assert await play(_turn(peer, args=["4"]), steps) == "end_turn"
    updates = [params["update"] for _, params in peer.sent]
    assert {update["sessionUpdate"] for update in updates} == {"agent_message_chunk"}
    numbers, stamps = zip(*(update["content"]["text"].split("@") for update in updates), strict=True)
    assert numbers == ("1", "2", "3", "4")
    sent_at = [float(stamp) for stamp in stamps]
    assert sent_at == sorted(sent_at)
    assert sent_at[-1] - sent_at[0] >= 3 / 50 - 0.005, "one every 1/50 s"


@pytest.mark.asyncio
async def test_a_template_default_stands_in_for_a_missing_variable_only() -> None:
    peer = FakePeer()
    steps = [{"say": "{args.0|300} {args.1|25} {missing}"}]
    assert await play(_turn(peer, args=["7"]), steps) == "end_turn"
    assert peer.sent[0][1]["update"]["content"]["text"] == "7 25 none"
