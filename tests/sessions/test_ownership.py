"""Which web process holds an execution's stream: a dead owner on this machine is known at once.

A web server killed outright records nothing. Its successor on the same
machine must take its agents over the moment it runs, not once the dead
one's heartbeat has gone stale, and pages must not call a stream "up" that
nobody holds.
"""

import re
import socket
import subprocess
import sys
from datetime import timedelta

import psutil
import pytest
from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from kandev_web.agentctl.envelope import GAP
from kandev_web.agentctl.stream_client import StreamEvent
from kandev_web.board.models import TaskState
from kandev_web.sessions import ownership, runner
from kandev_web.sessions.models import AgentExecution, Message
from kandev_web.sessions.text_batches import Batch

pytestmark = pytest.mark.postgres

HOST = socket.gethostname()


@pytest.fixture
def sleeper():
    """Another live process of this machine, and its owner id, as that process would have written it."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started = f"{psutil.Process(process.pid).create_time():.2f}"
    yield process, f"{HOST}:{process.pid}:{started}:0badcafe"
    process.kill()
    process.wait()


@pytest.fixture
def dead_owner():
    """The owner id of a process of this machine that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    started = f"{psutil.Process(process.pid).create_time():.2f}"
    process.wait()
    return f"{HOST}:{process.pid}:{started}:0badcafe"


def test_this_process_is_not_gone():
    assert not ownership.owner_gone(ownership.process_id())


def test_a_live_process_is_not_gone_and_an_ended_one_is(sleeper, dead_owner):
    _, live = sleeper
    assert not ownership.owner_gone(live)
    assert ownership.owner_gone(dead_owner)


def test_a_pid_now_used_by_a_later_process_is_a_gone_owner(sleeper):
    process, _ = sleeper
    # Same pid, another start time: the server restarted in a container, say, as pid 1 again.
    assert ownership.owner_gone(f"{HOST}:{process.pid}:12.00:0badcafe")


def test_nothing_is_known_of_an_owner_on_another_machine(dead_owner):
    elsewhere = "elsewhere" + dead_owner.removeprefix(HOST)
    assert not ownership.owner_gone(elsewhere)


def test_an_owner_written_without_its_start_time_is_gone_only_once_its_pid_is(sleeper, dead_owner):
    process, _ = sleeper
    assert not ownership.owner_gone(f"{HOST}:{process.pid}:abcdef12")
    assert ownership.owner_gone(f"{HOST}:{dead_owner.split(':')[1]}:abcdef12")


@pytest.fixture
def execution(make_task, make_session, make_execution, board):
    def make(owner, *, beat_ago=0.0, **fields):
        task = make_task("Work", step=board.steps.get(is_start=True), state=TaskState.IN_PROGRESS)
        beat = timezone.now() - timedelta(seconds=beat_ago)
        return make_execution(make_session(task), owner=owner, owner_heartbeat_at=beat, **fields)

    return make


def test_an_execution_whose_owner_died_here_is_claimed_before_its_heartbeat_is_stale(execution, dead_owner):
    orphan = execution(dead_owner, applied_seq=41)
    [claimed] = ownership.claim_orphans("me", stale_after=3600)
    assert (claimed.execution_id, claimed.applied_seq, claimed.previous_owner) == (orphan.pk, 41, dead_owner)
    assert AgentExecution.objects.get(pk=orphan.pk).owner == "me"
    assert ownership.claim_orphans("someone else", stale_after=3600) == []


def test_a_live_owner_keeps_its_executions_until_its_heartbeat_is_stale(execution, sleeper):
    _, live = sleeper
    held = execution(live, beat_ago=10)
    elsewhere = execution("elsewhere:4242:12.00:0badcafe", beat_ago=10)
    assert ownership.claim_orphans("me", stale_after=60) == []
    claimed = ownership.claim_orphans("me", stale_after=5)
    assert {c.execution_id for c in claimed} == {held.pk, elsewhere.pk}


def test_the_stream_is_held_only_while_its_owner_lives_and_beats(execution, sleeper, dead_owner):
    _, live = sleeper
    assert ownership.stream_held(execution(live))
    assert not ownership.stream_held(execution(live, stream_connected=False))
    assert not ownership.stream_held(execution(dead_owner))
    assert not ownership.stream_held(execution(live, beat_ago=3600))


@pytest.mark.django_db(transaction=True)
def test_a_notification_is_counted_applied_once_and_never_behind_a_later_one(execution):
    orphan = execution("me")

    def count(seq):
        with transaction.atomic():
            return ownership.count_applied(orphan.pk, seq)

    assert [count(seq) for seq in (1, 2, 2, 1, 5, 3, 6)] == [True, True, False, False, True, False, True]
    assert AgentExecution.objects.get(pk=orphan.pk).applied_seq == 6


def agent_stream_state(client, task_id: int) -> str:
    page = client.get(f"/tasks/{task_id}/").text
    return re.search(r'data-agent-stream="(\w+)"', page).group(1)


def test_the_task_page_calls_a_stream_whose_owner_was_killed_down_not_up(operator_client, execution, dead_owner):
    """The killed owner recorded nothing: its last word was "connected"."""
    orphan = execution(dead_owner, stream_connected=True)
    assert agent_stream_state(operator_client, orphan.session.task_id) == "down"
    orphan.owner = ownership.process_id()
    orphan.save()
    assert agent_stream_state(operator_client, orphan.session.task_id) == "up"


@pytest.mark.parametrize(("applied", "written"), [(0, "abcde"), (3, "de"), (5, ""), (9, "")])
def test_a_batch_of_streamed_text_writes_only_what_was_not_applied_and_counts_it(execution, applied, written):
    """After a takeover, agentctl replays chunks the dead owner may have written already."""
    orphan = execution("me", applied_seq=applied)
    batch = Batch("agent_message_chunk")
    for seq, text in enumerate("abcde", start=1):
        batch.add(seq, text)
    runner._write_batches([(runner.ExecutionRef(orphan.session_id, orphan.pk), batch)])
    assert list(Message.objects.filter(session=orphan.session_id).values_list("content", flat=True)) == (
        [written] if written else []
    )
    assert AgentExecution.objects.get(pk=orphan.pk).applied_seq == max(applied, 5)


def test_a_gap_agentctl_reports_is_told_once_however_often_it_is_sent(execution):
    """The client asks again after the same seq when it reconnects before anything newer came."""
    orphan = execution("me", applied_seq=100)
    ref = runner.ExecutionRef(orphan.session_id, orphan.pk)
    gap = StreamEvent(GAP, {"after_seq": 100, "first_kept_seq": 180}, seq=None)
    runner._apply_once(ref, gap)
    runner._apply_once(ref, gap)
    [note] = Message.objects.filter(session=orphan.session_id)
    assert "is missing here" in note.content
    assert AgentExecution.objects.get(pk=orphan.pk).applied_seq == 179


class ListingAgentctl:
    """What the owner asks agentctl after a gap, answered as agentctl would."""

    def __init__(self, pending):
        self.pending, self.asked = pending, []

    async def request(self, action, payload=None, **options):
        self.asked.append((action, options.get("ordered", True)))
        return {"pending": self.pending}


@pytest.mark.django_db(transaction=True)
def test_after_a_gap_the_owner_reads_agentctl_s_open_permission_requests(execution):
    """Asked while nobody held the stream, in the part agentctl no longer kept: shown all the same."""
    orphan = execution("me", applied_seq=100)
    ref = runner.ExecutionRef(orphan.session_id, orphan.pk)
    asked = {"pending_id": "p9", "tool_call": {"title": "Run the tests"}, "options": [{"optionId": "ok", "name": "OK"}]}
    agentctl = ListingAgentctl([asked])
    owner = runner.Runner()
    owner._owned[orphan.pk] = agentctl

    gap = StreamEvent(GAP, {"after_seq": 100, "first_kept_seq": 180}, seq=None)
    async_to_sync(owner._apply)(ref, gap)

    # Unordered: asked while the gap's notification is handled, its answer must not wait behind it.
    assert agentctl.asked == [("agent.permissions.list", False)]
    request = Message.objects.get(session=orphan.session_id, type="permission_request")
    assert (request.content, request.metadata["status"]) == ("Run the tests", "pending")
