"""acpdbg: one ACP session, every frame printed, elicitations answered from a file or stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ACPDBG = str(Path(sys.executable).parent / "acpdbg")
FORM = {
    "mode": "form",
    "sessionId": "sess-1",
    "message": "Pick a colour",
    "requestedSchema": {"type": "object", "properties": {"question_0": {"type": "string"}}},
}


def _acpdbg(args: list[str], agent: list[str], *, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([ACPDBG, *args, "--", *agent], input=stdin, capture_output=True, text=True, timeout=20)


def _frames(stdout: str) -> list[tuple[str, dict]]:
    lines = stdout.splitlines()
    assert all(line[:3] in (">> ", "<< ") for line in lines), lines
    return [(line[:2], json.loads(line[3:])) for line in lines]


def _elicitation_agent(scripted, answers: int) -> list[str]:
    steps = [{"expect": "session/prompt"}]
    for n in range(answers):
        steps += [
            {"send": {"jsonrpc": "2.0", "id": n, "method": "elicitation/create", "params": FORM}},
            {"expect_response": n},
        ]
    return scripted.argv([*steps, {"reply": {"stopReason": "end_turn"}}])


def test_prints_every_frame_and_answers_permissions_with_the_first_allow(mock_agent) -> None:
    finished = _acpdbg(["--prompt", "/e2e:permission-flow"], mock_agent)
    assert finished.returncode == 0, finished.stderr
    frames = _frames(finished.stdout)
    direction, initialize = frames[0]
    assert direction == ">>"
    assert initialize["method"] == "initialize"
    assert initialize["params"]["protocolVersion"] == 1
    assert initialize["params"]["clientCapabilities"] == {"_meta": {"terminal_output": True}}
    permission = next(frame for _, frame in frames if frame.get("method") == "session/request_permission")
    answer = next(
        frame
        for direction, frame in frames
        if direction == ">>" and frame.get("id") == permission["id"] and "result" in frame
    )
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    assert frames[-1] == ("<<", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
    assert "stopReason=end_turn prompts=1 elicitations=0" in finished.stderr


def test_advertises_form_elicitation_only_when_asked(mock_agent) -> None:
    finished = _acpdbg(["--elicitation", "form", "--prompt", "/e2e:simple-message"], mock_agent)
    assert finished.returncode == 0, finished.stderr
    _, initialize = _frames(finished.stdout)[0]
    assert initialize["params"]["clientCapabilities"] == {
        "_meta": {"terminal_output": True},
        "elicitation": {"form": {}},
    }


def test_answers_elicitations_from_the_file_in_order_then_declines(scripted, tmp_path: Path) -> None:
    answers = [{"action": "accept", "content": {"question_0": "Red"}}, {"action": "cancel"}]
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers))
    finished = _acpdbg(["--elicitation", "form", "--answers", str(answers_file)], _elicitation_agent(scripted, 3))
    assert finished.returncode == 0, finished.stderr
    sent = [frame["result"] for direction, frame in _frames(finished.stdout) if direction == ">>" and "result" in frame]
    assert sent == [*answers, {"action": "decline"}]
    assert "elicitations=3" in finished.stderr


def test_answers_elicitations_typed_on_stdin(scripted) -> None:
    typed = 'not json\n{"action": "accept", "content": {"question_0": "Blue"}}\n\n'
    finished = _acpdbg(["--elicitation", "form"], _elicitation_agent(scripted, 2), stdin=typed)
    assert finished.returncode == 0, finished.stderr
    sent = [frame["result"] for direction, frame in _frames(finished.stdout) if direction == ">>" and "result" in frame]
    assert sent == [{"action": "accept", "content": {"question_0": "Blue"}}, {"action": "decline"}]
    assert "that is not JSON" in finished.stderr


def test_a_dying_agent_fails_the_run(scripted) -> None:
    finished = _acpdbg([], scripted.argv([{"expect": "session/prompt"}, {"exit": 3}]))
    assert finished.returncode == 1
    assert "the session failed" in finished.stderr


def test_an_agent_that_cannot_start_fails_the_run() -> None:
    finished = _acpdbg([], ["/nonexistent/agent"])
    assert finished.returncode == 1
    assert "cannot start '/nonexistent/agent'" in finished.stderr
