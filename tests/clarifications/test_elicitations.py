"""Elicitation-backed clarifications in the web app: mirroring agentctl, and the answer fork."""

import re
import threading
from unittest.mock import ANY

import pytest
from asgiref.sync import async_to_sync
from django.test import Client
from django.utils import timezone

from kandev_web.agentctl.stream_client import AgentStreamNotConnected, NotFound
from kandev_web.agents.models import AgentProfile
from kandev_web.clarifications import actions, answering, elicitations, timeline
from kandev_web.clarifications.models import Attempt, Clarification, Source, Status
from kandev_web.clarifications.settlement import Answerer, describe, ending_of_record
from kandev_web.clarifications.templatetags.clarifications import answer_text
from kandev_web.db import AGENT_THREAD, database_sync_to_async
from kandev_web.notifications.models import Delivery
from kandev_web.sessions import events
from kandev_web.sessions.models import AgentExecution, Message, MessageType, SessionState, TaskSession, Turn
from kandev_web.sessions.pending import pending_actions
from testing_support.questions import REQUESTED, requested, timeline_row, timeline_rows
from testing_support.runner import FakeRunner

#: The record's one read (a locked session with a subquery and an EXISTS) is PostgreSQL's business too.
pytestmark = pytest.mark.postgres


@pytest.fixture
def execution(make_task, make_session, make_execution, operator):
    return make_execution(make_session(make_task("Paint"), acp_session_id="acp-1"))


def test_AC_08_AC_09_pending_id_verbatim_messages_and_pending_action_while_running(execution):
    record = requested(execution)
    assert (record.pending_id, record.source, record.execution_id) == (
        REQUESTED["pending_id"],
        Source.ELICITATION,
        execution.pk,
    )
    messages = list(Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).order_by("pk"))
    assert [m.requests_input for m in messages] == [False, True]
    assert {m.metadata["pending_id"] for m in messages} == {REQUESTED["pending_id"]}
    assert [m.metadata["question_index"] for m in messages] == [0, 1]
    assert timeline.asked(messages[1]).question["kind"] == "text"
    assert pending_actions(TaskSession.objects.all()) == {execution.session_id: "clarification"}
    execution.session.refresh_from_db()
    assert execution.session.state == SessionState.RUNNING


def test_AC_60_identical_questions_make_two_records(execution):
    requested(execution)
    requested(execution, pending_id="7d3c9a52-0000-4000-8000-000000000002")
    assert Clarification.objects.count() == 2


def test_F9_one_notification_per_pending_id_even_if_announced_again(execution, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        requested(execution)
        elicitations.reconcile(execution.pk, execution.session_id, [REQUESTED])
    assert Delivery.objects.filter(event="session.clarification_requested").count() == 1
    assert Clarification.objects.count() == 1


@pytest.mark.parametrize(
    ("outcome", "reason", "status"),
    [
        ("accepted", "operator", Status.ANSWERED),
        ("declined", "operator_skipped", Status.REJECTED),
        ("declined", "answer_timeout", Status.EXPIRED),
        ("cancelled", "turn_cancelled", Status.CANCELLED),
        ("cancelled", "agent_cancelled_request", Status.CANCELLED),
        ("cancelled", "agent_exited", Status.CANCELLED),
        ("cancelled", "agentctl_shutdown", Status.CANCELLED),
    ],
)
def test_F7_every_settlement_settles_the_record_and_its_messages(execution, outcome, reason, status):
    record = requested(execution)
    actions.do_settle_elicitation({"pending_id": record.pending_id, "outcome": outcome, "reason": reason})
    record.refresh_from_db()
    assert (record.status, record.settled_reason) == (status, reason)
    assert {row.status for row in timeline_rows()} == {status}
    assert pending_actions(TaskSession.objects.all()) == {}


def test_reconcile_settles_what_agentctl_no_longer_holds(execution):
    record = requested(execution)
    elicitations.reconcile(execution.pk, execution.session_id, [])
    record.refresh_from_db()
    assert (record.status, record.settled_reason) == (Status.CANCELLED, "gone")


def submit(record, **answer):
    """The answer service as a consumer awaits it (its database work in channels' own thread)."""
    return async_to_sync(answering.answer)(record, **answer)


@pytest.fixture
def fake_runner(monkeypatch):
    def install(answer, **options):
        fake = FakeRunner(answer, **options)
        monkeypatch.setattr(elicitations, "runner", fake)
        return fake

    return install


@pytest.mark.django_db(transaction=True)
def test_AC_61_a_second_answer_is_still_forwarded_and_agentctl_decides(execution, fake_runner):
    record = requested(execution)
    actions.do_settle_elicitation({"pending_id": record.pending_id, "outcome": "accepted", "reason": "operator"})
    fake = fake_runner(NotFound("no open elicitation"))
    delivery = submit(record, answers=[], rejected=False, reject_reason="")
    assert [action for action, _ in fake.sent] == ["agent.elicitations.respond"]
    assert not delivery.delivered
    assert "already answered" in delivery.message


@pytest.mark.django_db(transaction=True)
def test_AC_20a_stream_down_leaves_the_record_open(execution, fake_runner):
    record = requested(execution)
    fake_runner(AgentStreamNotConnected("down"))
    delivery = submit(
        record, answers=[{"question_id": "question_0", "selected_options": ["Red"]}], rejected=False, reject_reason=""
    )
    assert not delivery.delivered
    assert delivery.level == "error"
    record.refresh_from_db()
    assert record.status == Status.PENDING


@pytest.mark.django_db(transaction=True)
def test_the_forwarded_payload_is_the_contracts(execution, fake_runner):
    record = requested(execution)
    fake = fake_runner({"success": True, "action": "accept", "content": {"question_0_custom": "Green"}})
    answers = [{"question_id": "question_0", "selected_options": ["Red"], "custom_text": "Green"}]
    assert submit(record, answers=answers, rejected=False, reject_reason="").delivered
    assert fake.sent == [
        (
            "agent.elicitations.respond",
            {
                "pending_id": record.pending_id,
                "answers": answers,
                "rejected": False,
                "reject_reason": "",
                "answer_ref": ANY,
            },
        )
    ]
    record.refresh_from_db()
    assert (record.status, record.response["content"]) == (Status.ANSWERED, {"question_0_custom": "Green"})


@pytest.mark.django_db(transaction=True)
def test_an_outsider_gets_404_and_nothing_is_forwarded(execution, make_operator, fake_runner):
    record = requested(execution)
    fake = fake_runner({"success": True, "action": "decline"})
    client = Client()
    client.force_login(make_operator("mallory"))
    assert client.post(f"/clarifications/{record.pending_id}/respond/", {"action": "skip"}).status_code == 404
    assert fake.sent == []


def test_a_question_recorded_by_a_process_that_died_before_announcing_it_is_announced_when_listed_again(
    execution, monkeypatch
):
    """The record is committed first (so its overlay can go out at once); the rest follows, and is not lost."""
    from kandev_web.clarifications import records

    announce = records.announce

    def died(record):
        raise SystemExit("the web process stopped here")

    monkeypatch.setattr(records, "announce", died)
    with pytest.raises(SystemExit):
        requested(execution)
    assert Clarification.objects.filter(status=Status.PENDING).count() == 1
    assert not Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).exists()

    monkeypatch.setattr(records, "announce", announce)
    elicitations.reconcile(execution.pk, execution.session_id, [REQUESTED])
    assert Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).count() == 2
    assert Delivery.objects.filter(event="session.clarification_requested").count() == 1
    elicitations.reconcile(execution.pk, execution.session_id, [REQUESTED])
    assert Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).count() == 2


SECRET = "sk-live-0123456789abcdef"
SECRET_ANSWERS = [
    {"question_id": "question_0", "selected_options": ["Blue"], "custom_text": ""},
    {"question_id": "apiKey", "selected_options": [], "custom_text": SECRET},
]


def stored_anywhere(secret: str) -> bool:
    """Whether ``secret`` is in any record, answer attempt or timeline message, as stored."""
    rows = [
        *Clarification.objects.values_list("response", "questions"),
        *Attempt.objects.values_list("response", "accepted"),
        *Message.objects.values_list("metadata"),
    ]
    return secret in repr(rows)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("agentctl_settles_first", [False, True])
def test_a_secret_is_sent_to_agentctl_and_kept_nowhere(execution, fake_runner, agentctl_settles_first):
    record = requested(execution)
    # agentctl reports the answer without the secret (docs/agent-stream.md), whichever comes first.
    reported = {"action": "accept", "content": {"question_0": "Blue"}, "withheld": ["apiKey"]}
    fake = fake_runner({"success": True, **reported}, settles=agentctl_settles_first)
    assert submit(record, answers=SECRET_ANSWERS, rejected=False, reject_reason="").delivered
    if not agentctl_settles_first:
        fake.settle_sent()
    # agentctl got the value ...
    assert fake.sent[0][1]["answers"][1]["custom_text"] == SECRET
    # ... and the record and its messages keep only that a value was sent.
    assert not stored_anywhere(SECRET)
    record.refresh_from_db()
    assert record.status == Status.ANSWERED
    assert record.response["answers"][1] == {
        "question_id": "apiKey",
        "selected_options": [],
        "custom_text": "",
        "withheld": True,
    }
    assert record.response["answers"][0]["selected_options"] == ["Blue"]
    assert answer_text(timeline_row("apiKey")) == "•••• (sent, not stored)"
    assert answer_text(timeline_row("question_0")) == "Blue"


def test_a_secret_reported_by_an_older_agentctl_is_not_kept_either(execution):
    record = requested(execution)
    actions.do_settle_elicitation(
        {"pending_id": record.pending_id, "outcome": "accepted", "reason": "operator", "content": {"apiKey": SECRET}}
    )
    assert not stored_anywhere(SECRET)


def test_a_secret_an_older_agentctl_reports_in_its_response_is_not_kept_on_the_attempt(execution):
    record = requested(execution)
    ref = actions.do_record_attempt(record, answers=SECRET_ANSWERS, rejected=False, answerer=None)
    actions.do_accept_attempt(record, ref, {"success": True, "content": {"apiKey": SECRET}})
    elicitations.reconcile(execution.pk, execution.session_id, [])
    record.refresh_from_db()
    assert record.status == Status.ANSWERED
    assert not stored_anywhere(SECRET)


@pytest.mark.django_db(transaction=True)
def test_a_secret_for_an_agent_that_is_gone_is_not_kept(execution, fake_runner):
    record = requested(execution)
    AgentExecution.objects.filter(pk=execution.pk).update(ended_at=timezone.now())
    record = Clarification.objects.select_related("execution").get(pk=record.pk)
    fake = fake_runner({"success": True})
    delivery = submit(record, answers=SECRET_ANSWERS, rejected=False, reject_reason="")
    assert not delivery.delivered
    assert fake.sent == []
    assert not stored_anywhere(SECRET)
    assert answer_text(timeline_row("apiKey")) == "•••• (not sent, not stored)"


@pytest.fixture
def notices(monkeypatch):
    """The settle notices announced to the task's pages, as (pending id, reason)."""
    sent = []
    monkeypatch.setattr(
        "kandev_web.clarifications.actions.live.clarification_settled",
        lambda task_id, pending_id, reason: sent.append((pending_id, reason)),
    )
    return sent


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("agentctl_settles_first", [False, True])
def test_the_answerer_and_surface_are_recorded_and_announced_once(
    execution, operator, fake_runner, notices, agentctl_settles_first
):
    record = requested(execution)
    reported = {"success": True, "action": "accept", "content": {"question_0": "Red"}}
    fake = fake_runner(reported, settles=agentctl_settles_first)
    answerer = Answerer.of(operator, "task_page", "tab-1")
    answers = [{"question_id": "question_0", "selected_options": ["Red"]}]
    assert submit(record, answers=answers, rejected=False, reject_reason="", answerer=answerer).delivered
    if not agentctl_settles_first:
        # The answering process's report announces nothing: the owner's settlement does, once.
        assert notices == []
        fake.settle_sent()
    assert notices == [(record.pending_id, "operator")]
    record.refresh_from_db()
    assert (record.answered_by, record.answered_via, record.answered_from) == (operator, "task_page", "tab-1")
    ending = ending_of_record(timeline_row("question_0").record)
    assert (ending.answered_by, ending.answered_via, ending.answered_from, ending.reason) == (
        "alice",
        "task_page",
        "tab-1",
        "operator",
    )
    assert ending.settled_at


def test_of_two_racing_answers_the_one_agentctl_names_is_recorded(
    execution, operator, make_operator, workspace, notices
):
    """Both pages recorded their attempt before forwarding; the owner settles from the winner's, once."""
    record = requested(execution)
    bob = make_operator("bob", workspace=workspace)
    red = actions.do_record_attempt(
        record,
        answers=[{"question_id": "question_0", "selected_options": ["Red"]}],
        rejected=False,
        answerer=Answerer.of(operator, "task_page", "tab-1"),
    )
    actions.do_record_attempt(record, answers=[], rejected=True, answerer=Answerer.of(bob, "inbox", "tab-2"))
    actions.do_settle_elicitation(
        {
            "pending_id": record.pending_id,
            "outcome": "accepted",
            "reason": "operator",
            "content": {"question_0": "Red"},
            "answer_ref": red,
        }
    )
    record.refresh_from_db()
    assert (record.status, record.answered_by, record.answered_via, record.answered_from) == (
        Status.ANSWERED,
        operator,
        "task_page",
        "tab-1",
    )
    assert record.response["answers"][0]["selected_options"] == ["Red"]
    assert not record.response["rejected"]
    assert notices == [(record.pending_id, "operator")]


class AgentThreadHeld(FakeRunner):
    """agentctl, reached while the agent runner's thread is busy with something else (a burst of agent output).

    The test holds that thread until the answer has reached agentctl; what the
    answering process had recorded by then is kept in ``attempts_when_sent``.
    """

    def __init__(self, answer, **options):
        super().__init__(answer, **options)
        self.held, self.attempts_when_sent = threading.Event(), None
        AGENT_THREAD.submit(self.held.wait, 10)

    async def request(self, endpoint, action, payload, timeout=None, *, ordered=True):
        self.attempts_when_sent = await database_sync_to_async(Attempt.objects.count)()
        self.held.set()
        return await super().request(endpoint, action, payload, timeout, ordered=ordered)


@pytest.mark.django_db(transaction=True)
def test_an_answer_leaves_without_waiting_for_its_attempt_and_the_owner_still_names_who_answered(
    execution, operator, monkeypatch
):
    """This process owns the stream: the attempt is written in the thread that applies the settlement, first."""
    agentctl = AgentThreadHeld({"success": True, "action": "accept", "content": {"question_0": "Red"}})
    monkeypatch.setattr(elicitations, "runner", agentctl)
    record = requested(execution)
    answers = [{"question_id": "question_0", "selected_options": ["Red"]}]
    answerer = Answerer.of(operator, "task_page", "tab-1")
    assert submit(record, answers=answers, rejected=False, reject_reason="", answerer=answerer).delivered
    assert agentctl.attempts_when_sent == 0
    record.refresh_from_db()
    assert (record.status, record.answered_by, record.answered_via) == (Status.ANSWERED, operator, "task_page")


@pytest.mark.django_db(transaction=True)
def test_an_answer_to_a_stream_another_process_owns_leaves_once_its_attempt_is_committed(
    execution, operator, fake_runner
):
    """That owner may read agentctl's settlement at any moment: the attempt must be there already."""
    fake = fake_runner({"success": True, "action": "accept", "content": {"question_0": "Red"}}, owner=False)
    record = requested(execution)
    answers = [{"question_id": "question_0", "selected_options": ["Red"]}]
    answerer = Answerer.of(operator, "inbox", "tab-2")
    seen = []
    sent = fake.request

    async def request(*args, **kwargs):
        seen.append(await database_sync_to_async(Attempt.objects.count)())
        return await sent(*args, **kwargs)

    fake.request = request
    assert submit(record, answers=answers, rejected=False, reject_reason="", answerer=answerer).delivered
    assert seen == [1]
    record.refresh_from_db()
    assert (record.status, record.answered_by, record.answered_via) == (Status.ANSWERED, operator, "inbox")


def test_an_older_agentctl_s_settlement_takes_the_only_attempt_s_answerer(execution, operator):
    """agentctl before ``answer_ref``: with one answer tried, it is the one that won."""
    record = requested(execution)
    actions.do_record_attempt(record, answers=[], rejected=True, answerer=Answerer.of(operator, "form"))
    skipped = {"pending_id": record.pending_id, "outcome": "declined", "reason": "operator_skipped"}
    actions.do_settle_elicitation(skipped)
    record.refresh_from_db()
    assert (record.status, record.answered_by, record.answered_via) == (Status.REJECTED, operator, "form")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("rejected", "reported", "status", "reason"),
    [
        (False, {"action": "accept", "content": {"question_0": "Red"}}, Status.ANSWERED, "operator"),
        (True, {"action": "decline"}, Status.REJECTED, "operator_skipped"),
    ],
)
def test_an_answer_agentctl_took_while_the_owner_s_stream_was_down_settles_from_its_attempt_on_reconnect(
    execution, operator, fake_runner, notices, rejected, reported, status, reason
):
    """Scale-out: agentctl's ``elicitation.settled`` never reached the owner; agentctl lists the question no more."""
    record = requested(execution)
    fake_runner({"success": True, **reported}, settles=False)
    answers = [] if rejected else [{"question_id": "question_0", "selected_options": ["Red"]}]
    answerer = Answerer.of(operator, "inbox", "tab-2")
    assert submit(record, answers=answers, rejected=rejected, reject_reason="", answerer=answerer).delivered
    elicitations.reconcile(execution.pk, execution.session_id, [])
    elicitations.reconcile(execution.pk, execution.session_id, [])
    record.refresh_from_db()
    assert (record.status, record.settled_reason, record.answered_by, record.answered_via, record.answered_from) == (
        status,
        reason,
        operator,
        "inbox",
        "tab-2",
    )
    assert record.response["rejected"] is rejected
    assert record.response.get("content") == reported.get("content")
    assert notices == [(record.pending_id, reason)]


def test_an_answer_agentctl_never_took_leaves_the_question_withdrawn_on_reconnect(execution, operator):
    """An attempt recorded but never accepted (the stream was down, agentctl did not respond) is no answer."""
    record = requested(execution)
    actions.do_record_attempt(record, answers=[], rejected=True, answerer=Answerer.of(operator, "form"))
    elicitations.reconcile(execution.pk, execution.session_id, [])
    record.refresh_from_db()
    assert (record.status, record.settled_reason, record.answered_by) == (Status.CANCELLED, "gone", None)


def test_a_question_whose_agentctl_died_is_withdrawn_saying_it_can_no_longer_be_answered(execution, notices):
    """agentctl was killed with its agent: nobody is left to settle the question, so it must not stay open."""
    record = requested(execution)
    events.record_agent_exited(execution.pk, {"exit_code": -9, "signal": None}, agentctl_gone=True)
    record.refresh_from_db()
    assert (record.status, record.settled_reason) == (Status.CANCELLED, "agentctl_gone")
    assert notices == [(record.pending_id, "agentctl_gone")]
    assert describe(ending_of_record(record)).sentence == (
        "Withdrawn: the agent stopped; this question can no longer be answered"
    )


def test_a_withdrawal_is_announced_at_once(execution, notices):
    record = requested(execution)
    actions.do_settle_elicitation({"pending_id": record.pending_id, "outcome": "cancelled", "reason": "turn_cancelled"})
    assert notices == [(record.pending_id, "turn_cancelled")]


@pytest.fixture
def overlays_sent(monkeypatch):
    """The overlays sent to the task's pages as questions are asked, as (pending id, language, html)."""
    sent = []
    monkeypatch.setattr(
        "kandev_web.clarifications.records.live.question_asked",
        lambda task_id, pending_id, language, html: sent.append((pending_id, language, html)),
    )
    return sent


def shown_with(sent, pending_id):
    """The questions shown (their pending ids, in order) by the English overlay sent when ``pending_id`` was asked."""
    (html,) = [html for asked, language, html in sent if asked == pending_id and language == "en"]
    return re.findall(r'data-testid="clarification-overlay"\s+data-pending-id="([^"]+)"', html)


def test_a_first_question_s_overlay_names_its_agent_and_shows_only_it(execution, overlays_sent):
    workspace = execution.session.task.board.workspace
    profile = AgentProfile.objects.create(workspace=workspace, name="Claude", command=["claude"])
    TaskSession.objects.filter(pk=execution.session_id).update(agent_profile=profile)
    record = requested(execution)
    assert shown_with(overlays_sent, record.pending_id) == [record.pending_id]
    assert "Claude asks" in overlays_sent[0][2]
    assert record.turn == Turn.objects.get(session=execution.session_id)


def test_a_question_asked_while_another_waits_shows_both_the_older_first(execution, overlays_sent):
    first = requested(execution)
    second = requested(execution, pending_id="7d3c9a52-0000-4000-8000-000000000002")
    assert shown_with(overlays_sent, second.pending_id) == [first.pending_id, second.pending_id]


def test_a_question_after_the_other_was_answered_shows_only_itself(execution, overlays_sent):
    first = requested(execution)
    actions.do_settle_elicitation({"pending_id": first.pending_id, "outcome": "accepted", "reason": "operator"})
    second = requested(execution, pending_id="7d3c9a52-0000-4000-8000-000000000003")
    assert shown_with(overlays_sent, second.pending_id) == [second.pending_id]


def test_an_async_question_says_the_agent_goes_on_without_waiting(execution, overlays_sent):
    """Codex's ``request_user_input_async``: ``delivery: "async"`` is kept, and every surface's overlay says it."""
    record = requested(execution, delivery="async")
    assert Clarification.objects.get(pk=record.pk).delivery == "async"
    (english,) = [html for pending_id, language, html in overlays_sent if language == "en"]
    assert re.search(
        r'data-testid="clarification-delivery" data-delivery="async">\s*'
        r"The agent goes on without waiting for your answer\.",
        english,
    )
    german = [html for pending_id, language, html in overlays_sent if language == "de"]
    assert german
    assert all("Der Agent arbeitet weiter, ohne auf Ihre Antwort zu warten." in html for html in german)


def test_a_question_the_agent_waits_for_says_nothing_of_delivery(execution, overlays_sent):
    record = requested(execution)
    other = requested(execution, pending_id="7d3c9a52-0000-4000-8000-000000000002", delivery="later")
    assert (record.delivery, other.delivery) == ("", "")
    assert not any("clarification-delivery" in html for _, _, html in overlays_sent)


CODEX_QUESTION = {
    "id": "colour",
    "title": "Colour",
    "prompt": "Which colour should I use?",
    "kind": "single",
    "accepts_text": True,
    "sensitive": False,
    "options": [{"id": "Red", "label": "Red"}, {"id": "None of the above", "label": "None of the above"}],
    "note": True,
    "other_option": "None of the above",
}


@pytest.mark.django_db(transaction=True)
def test_the_timeline_shows_codexs_pick_and_note_both(execution, fake_runner):
    """Codex's note is sent beside the pick, so the record says both, not the note alone."""
    record = requested(execution, questions=[CODEX_QUESTION])
    content = {"colour": "Red", "colour_note": "because it is warm"}
    fake_runner({"success": True, "action": "accept", "content": content})
    answers = [{"question_id": "colour", "selected_options": ["Red"], "custom_text": "because it is warm"}]
    assert submit(record, answers=answers, rejected=False, reject_reason="").delivered
    assert answer_text(timeline_row("colour")) == "Red, with the note: because it is warm"
