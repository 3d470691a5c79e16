"""AC-19: for an agent that never elicits, the flag changes nothing but the capability it is offered.

GIVEN a non-Claude ACP agent that never sends ``elicitation/create``, WHEN the
same scripted session is run once with the flag on and once with it off, THEN
the two runs agree on the ordered sequence of JSON-RPC method names exchanged,
the session's final state, the ordered list of persisted message types and the
resulting pending action; the ``initialize`` request's ``clientCapabilities``
is the only permitted difference.

The module runs two servers of its own, each on its own copy of the migrated
database: one with ``KANDEV_FEATURES_ACP_ELICITATION=true``, one without. In
each, the operator starts the mock agent's ``tool-calls`` scenario in the
browser through a profile whose command wraps the mock agent in
``e2e/acp_tap.py``, which logs every ACP frame agentctl and the agent exchange.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from testing_support.bridge.profiles import orm
from testing_support.browser import login
from testing_support.fixtures import copy_database
from testing_support.processes import running_server, server_environ

from .tapped import create_tapped_profile, start_tapped

FLAG_ENV = "KANDEV_FEATURES_ACP_ELICITATION"
FLAG = "features.acpElicitation"
SCENARIO = "/e2e:tool-calls"
TURN_MS = 15_000


@pytest.fixture(scope="module")
def servers(migrated_database, tmp_path_factory):
    """``{"on": Server, "off": Server}``, each with a database of its own."""
    with ExitStack() as stack:
        started = {}
        for name, extra in (("on", {FLAG_ENV: "true"}), ("off", {})):
            folder = tmp_path_factory.mktemp(f"ac19-{name}")
            database = copy_database(migrated_database, folder)
            started[name] = stack.enter_context(running_server(server_environ(database, extra), folder / "server.log"))
        yield started


@dataclass
class Snapshot:
    """What AC-19 compares, read from the server's database."""

    state: str
    message_types: list[str]
    pending_action: str | None


@dataclass
class Run:
    after_turn: Snapshot
    after_stop: Snapshot
    runtime_flags: dict[str, bool]
    frames: list[dict[str, Any]]  # the tap's log: {"direction", "frame"}


def snapshot(server, task_id: int) -> tuple[Snapshot, dict[str, bool]]:
    found = orm(
        server,
        "import json\n"
        "from kandev_web.sessions.models import TaskSession\n"
        "from kandev_web.sessions.pending import pending_actions\n"
        f"session = TaskSession.objects.get(task_id={task_id})\n"
        "print(json.dumps({\n"
        "    'state': session.state,\n"
        "    'message_types': list(session.messages.order_by('created_at', 'pk').values_list('type', flat=True)),\n"
        "    'pending_action': pending_actions(TaskSession.objects.filter(pk=session.pk)).get(session.pk),\n"
        "    'runtime_flags': session.executions.get().runtime_flags,\n"
        "}))\n",
    )
    flags = found.pop("runtime_flags")
    return Snapshot(**found), flags


def run_scripted_session(browser, server, folder: Path) -> Run:
    """The operator starts the tapped mock agent on ``tool-calls``, waits for the turn to end, stops it."""
    log = folder / "acp.jsonl"
    workdir = folder / "work"
    workdir.mkdir()
    ids = server.create_operator("ac19", workspace="AC-19", tasks=True)
    create_tapped_profile(server, workspace_id=ids["workspace_id"], log=log, working_dir=workdir)
    task_id = ids["task_ids"][0]
    context = browser.new_context()
    page = context.new_page()
    login(page, server, "ac19", f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_tapped(page, SCENARIO)

    sessions = page.get_by_test_id("task-sessions")
    expect(sessions).to_have_attribute("data-session-state", "WAITING_FOR_INPUT", timeout=TURN_MS)
    # The scenario played: two tool calls, both completed, and the closing message.
    expect(page.get_by_test_id("tool-call")).to_have_count(2)
    expect(page.locator("[data-testid=tool-call][data-status=completed]")).to_have_count(2)
    expect(
        page.locator("[data-testid=timeline-message][data-author=agent]").filter(has_text="42 tests pass")
    ).to_have_count(1)
    expect(page.get_by_test_id("clarification-overlay")).to_have_count(0)
    after_turn, flags = snapshot(server, task_id)

    page.get_by_test_id("session-stop").click()
    expect(sessions).to_have_attribute("data-session-state", "CANCELLED")
    expect(sessions).to_have_attribute("data-agent-live", "false", timeout=TURN_MS)
    after_stop, _ = snapshot(server, task_id)
    context.close()
    frames = [json.loads(line) for line in log.read_text().splitlines()]
    return Run(after_turn, after_stop, flags, frames)


def method_sequence(frames: list[dict[str, Any]]) -> list[str]:
    """``direction method`` per request or notification, ``direction result|error`` per response."""
    sequence = []
    for entry in frames:
        frame = entry["frame"]
        if not isinstance(frame, dict):
            what = "<not JSON-RPC>"
        elif "method" in frame:
            what = frame["method"]
        else:
            what = "error" if "error" in frame else "result"
        sequence.append(f"{entry['direction']} {what}")
    return sequence


def update_kinds(frames: list[dict[str, Any]]) -> list[str]:
    return [
        entry["frame"]["params"]["update"]["sessionUpdate"]
        for entry in frames
        if isinstance(entry["frame"], dict) and entry["frame"].get("method") == "session/update"
    ]


def initialize_params(frames: list[dict[str, Any]]) -> dict[str, Any]:
    (params,) = [
        entry["frame"]["params"]
        for entry in frames
        if isinstance(entry["frame"], dict) and entry["frame"].get("method") == "initialize"
    ]
    return params


def test_AC_19_flag_on_and_off_agree_for_an_agent_that_never_elicits(browser, servers, tmp_path):
    runs = {}
    for name, server in servers.items():
        (tmp_path / name).mkdir()
        runs[name] = run_scripted_session(browser, server, tmp_path / name)
    on, off = runs["on"], runs["off"]
    assert on.runtime_flags[FLAG] is True
    assert off.runtime_flags[FLAG] is False

    # The ordered JSON-RPC method names (and the responses between them).
    methods_on, methods_off = method_sequence(on.frames), method_sequence(off.frames)
    assert methods_on == methods_off
    assert methods_on[:6] == [
        "client->agent initialize",
        "agent->client result",
        "client->agent session/new",
        "agent->client result",
        "client->agent session/prompt",
        "agent->client session/update",
    ], methods_on
    assert methods_on[-1] == "agent->client result", "the prompt's answer ends the exchange"
    assert not any("elicitation" in method for method in methods_on)
    assert update_kinds(on.frames) == update_kinds(off.frames)
    assert {"plan", "tool_call", "tool_call_update", "agent_message_chunk"} <= set(update_kinds(on.frames))

    # clientCapabilities is the only difference: elicitation.form, offered with the flag on.
    init_on, init_off = initialize_params(on.frames), initialize_params(off.frames)
    capabilities_on, capabilities_off = init_on.pop("clientCapabilities"), init_off.pop("clientCapabilities")
    assert init_on == init_off
    assert "elicitation" not in capabilities_off
    assert capabilities_on == {**capabilities_off, "elicitation": {"form": {}}}

    # Session state, persisted message types and pending action, when the turn ended and once stopped.
    assert on.after_turn == off.after_turn
    assert on.after_turn.state == "WAITING_FOR_INPUT"
    assert on.after_turn.pending_action is None
    assert on.after_turn.message_types[0] == "message"  # the operator's prompt
    assert {"agent_plan", "tool_read", "tool_execute"} <= set(on.after_turn.message_types), on.after_turn
    assert on.after_stop == off.after_stop
    assert on.after_stop.state == "CANCELLED"
