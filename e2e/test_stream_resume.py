"""A web process killed outright loses nothing of what its agents say (issue 26).

The agent and its agentctl outlive the web process. Its successor, on the same
machine, takes the agent over as soon as it runs (not once the dead owner's
heartbeat has gone stale: the heartbeat here is a minute, longer than these
specs wait), and agentctl replays what came after the last notification
applied: every chunk is in the timeline once and in order, the turn's end is
recorded, and an answer given meanwhile ends as it did at the agent.
"""

import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from kandev_web.mock_agent.store import Conversation, SessionStore
from testing_support.browser import agent_said, login, option
from testing_support.browser import start_scenario as start
from testing_support.processes import Server, running_server, server_environ, two_web_processes

#: Long enough that only a dead owner, never a stale heartbeat, explains a takeover.
ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_OWNER_HEARTBEAT_SECONDS": "60"}

#: What ``long-stream`` says, in one message: 300 lines, then its last words.
LONG_STREAM = "".join(f"Line {n} of the long stream.\n" for n in range(1, 301)) + "Done streaming."

STORED = """
import json
from kandev_web.sessions.models import Message, TaskSession
session = TaskSession.objects.filter(task_id={task_id}).latest("pk")
turn = session.turns.latest("pk")
print(json.dumps({{
    "state": session.state,
    "turn_ended": turn.completed_at is not None,
    "messages": list(Message.objects.filter(session=session, author_type="agent").order_by("created_at", "pk")
                     .values_list("type", "content")),
}}))
"""


AGENT_SESSION = """
import json
from kandev_web.mock_agent.store import ENV_VAR
from kandev_web.sessions.models import TaskSession
session = TaskSession.objects.select_related("agent_profile").filter(task_id={task_id}).latest("pk")
print(json.dumps([session.agent_profile.env[ENV_VAR], session.acp_session_id]))
"""


def stored(server: Server, task_id: int) -> dict:
    """The session as the database holds it: what a reloaded page shows."""
    return json.loads(server.manage("shell", "-v", "0", "-c", STORED.format(task_id=task_id)))


def kill(server: Server) -> None:
    """SIGKILL the web process only: its agentctl and agent are in its group, and live on."""
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()


def wait_for_the_agent_to_finish(server: Server, task_id: int) -> None:
    """Until the mock agent has kept its whole answer, which it does just before it ends the turn.

    Read from the agent's own store (the demo profile gives it one), not
    through a web process: none is running.
    """
    found = server.manage("shell", "-v", "0", "-c", AGENT_SESSION.format(task_id=task_id))
    directory, acp_session_id = json.loads(found)
    store = SessionStore(Path(directory))
    deadline = time.monotonic() + 60
    while not _said_to_the_end(store.load(acp_session_id)):
        assert time.monotonic() < deadline, "the agent never finished its long stream"
        time.sleep(0.1)  # polling the agent's file, not the page


def _said_to_the_end(conversation: Conversation | None) -> bool:
    if conversation is None:  # not stored yet
        return False
    last = conversation.history[-1]
    return last.role == "agent" and last.text.endswith("Done streaming.")


def stream_then_kill(browser, server: Server, username: str) -> int:
    """Start ``long-stream`` through ``server`` and kill it a third of the way in; the task's id."""
    ids = server.create_operator(username, workspace=username.title(), tasks=True)
    task_id = ids["task_ids"][0]
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    start(page, "long-stream")
    expect(page.get_by_test_id("timeline-message").filter(has_text="Line 100 of")).to_have_count(1)
    kill(server)
    page.context.close()
    return task_id


def wait_for_the_turn_to_end(browser, server: Server, username: str, task_id: int):
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    panel = page.get_by_test_id("task-sessions")
    expect(panel).to_have_attribute("data-turn-open", "false", timeout=60_000)
    expect(panel).to_have_attribute("data-agent-stream", "up")
    return page


def test_a_web_process_killed_mid_stream_loses_no_chunk_and_doubles_none(browser, fresh_database):
    env = server_environ(fresh_database, ENV)
    with running_server(env, fresh_database.parent / "first.log") as first:
        task_id = stream_then_kill(browser, first, "sirius")
        with running_server(env, fresh_database.parent / "second.log") as second:
            page = wait_for_the_turn_to_end(browser, second, "sirius", task_id)
            expect(page.get_by_test_id("timeline-message").filter(has_text="Done streaming.")).to_have_count(1)
            session = stored(second, task_id)
            assert session["turn_ended"]
            assert session["state"] != "RUNNING"
            assert session["messages"] == [["thinking", "This will take a while."], ["message", LONG_STREAM]]


def test_an_answer_given_while_the_new_process_takes_over_is_recorded_once(browser, fresh_database):
    env = server_environ(fresh_database, ENV)
    with running_server(env, fresh_database.parent / "first-q.log") as first:
        ids = first.create_operator("vega", workspace="Vega", tasks=True)
        task = f"/tasks/{ids['task_ids'][0]}/"
        asking = browser.new_context().new_page()
        login(asking, first, "vega", task)
        start(asking, "elicit-single")
        expect(asking.get_by_test_id("clarification-overlay")).to_be_visible()
        kill(first)

        with running_server(env, fresh_database.parent / "second-q.log") as second:
            page = browser.new_context().new_page()
            login(page, second, "vega", task)
            option(page, "Blue").click()
            page.get_by_test_id("clarification-submit").click()
            assert agent_said(page, "Answer:") == {"action": "accept", "content": {"question_0": "Blue"}}
            expect(page.get_by_test_id("clarification-record")).to_have_count(1)
            expect(page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
            expect(page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false")
            page.reload()
            expect(page.get_by_test_id("timeline-message").filter(has_text="Answer:")).to_have_count(1)


@pytest.fixture
def two_processes(postgres_url, redis_url, tmp_path):
    """Two web processes on PostgreSQL and Redis, as on several machines."""
    with two_web_processes(postgres_url, redis_url, tmp_path, ENV) as both:
        yield both


def test_the_other_web_process_takes_over_a_stream_mid_way_with_nothing_lost_or_doubled(browser, two_processes):
    a, b = two_processes
    username = f"altair{uuid.uuid4().hex[:6]}"
    task_id = stream_then_kill(browser, a, username)
    wait_for_the_turn_to_end(browser, b, username, task_id)
    session = stored(b, task_id)
    assert session["turn_ended"]
    assert session["messages"] == [["thinking", "This will take a while."], ["message", LONG_STREAM]]


def test_what_agentctl_no_longer_keeps_is_said_to_be_missing_and_the_turn_still_ends(browser, fresh_database):
    """A replay bound of 4 KiB keeps a few lines only: the restarted process is told, and says so.

    The successor starts only once the agent has said all 300 lines, ~200 of
    them after the kill: far more than 4 KiB, however fast it would start.
    """
    env = server_environ(fresh_database, {**ENV, "KANDEV_AGENTCTL_REPLAY_BYTES": "4k"})
    with running_server(env, fresh_database.parent / "first-gap.log") as first:
        task_id = stream_then_kill(browser, first, "rigel")
        wait_for_the_agent_to_finish(first, task_id)
        with running_server(env, fresh_database.parent / "second-gap.log") as second:
            page = wait_for_the_turn_to_end(browser, second, "rigel", task_id)
            missing = page.get_by_test_id("timeline-message").filter(has_text="is missing here")
            expect(missing).to_have_count(1)
            # The note stands where the text is missing, between what was applied before and after it.
            [_, (kind_before, before), (kind_after, after)] = stored(second, task_id)["messages"]
            assert kind_before == kind_after == "message"
            assert before.startswith(LONG_STREAM[: LONG_STREAM.index("Line 101 ")])
            assert after.endswith("Line 300 of the long stream.\nDone streaming.")
            assert before + after != LONG_STREAM
            assert LONG_STREAM.startswith(before)
            assert LONG_STREAM.endswith(after)
