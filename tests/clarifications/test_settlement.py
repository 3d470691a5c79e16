"""What each viewer reads about how a question ended (``settlement.describe``)."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.clarifications.models import Clarification
from kandev_web.clarifications.settlement import Ending, describe, ending_of_record, tab_id

ASKED = datetime(2026, 12, 1, 9, 7, tzinfo=UTC)
SETTLED = datetime(2026, 12, 1, 10, 2, tzinfo=UTC)
HERE, THERE = tab_id("specific.a!1"), tab_id("specific.b!2")


def ended(status="answered", reason="operator", **fields) -> Ending:
    return Ending(status=status, reason=reason, asked_at=ASKED, settled_at=SETTLED, **fields)


BY_DEMO_HERE = {"answered_by": "demo", "answered_via": "task_page", "answered_from": HERE}


@pytest.mark.parametrize(
    ("ending", "viewer", "sentence", "where"),
    [
        (ended(**BY_DEMO_HERE), HERE, "Answered by demo in this tab", "this_tab"),
        (ended(**BY_DEMO_HERE), THERE, "Answered by demo in another tab", "another_tab"),
        (ended(**BY_DEMO_HERE), "", "Answered by demo in another tab", "another_tab"),
        (ended("rejected", "operator_skipped", **BY_DEMO_HERE), THERE, "Skipped by demo in another tab", "another_tab"),
        (ended(answered_by="demo", answered_via="form"), HERE, "Answered by demo through the HTML form", "form"),
        (ended(answered_by="ops", answered_via="api"), HERE, "Answered by ops through the API", "api"),
        (ended(), HERE, "Answered", ""),
        (
            ended(reason="undelivered", **BY_DEMO_HERE),
            THERE,
            "Answered by demo in another tab; not delivered: the agent was gone",
            "another_tab",
        ),
        (ended("expired", "answer_timeout"), HERE, "Timed out after 55\xa0minutes with no answer", ""),
        (ended("cancelled", "turn_cancelled"), HERE, "Withdrawn: the turn was cancelled", ""),
        (ended("cancelled", "agent_cancelled_request"), HERE, "Withdrawn by the agent", ""),
        (ended("cancelled", "agent_exited"), HERE, "Withdrawn: the agent exited", ""),
        (ended("cancelled", "agentctl_shutdown"), HERE, "Withdrawn: the agent was stopped", ""),
        (ended("cancelled", "gone"), HERE, "Withdrawn: the agent no longer has this question", ""),
        (
            ended("cancelled", "agentctl_gone"),
            HERE,
            "Withdrawn: the agent stopped; this question can no longer be answered",
            "",
        ),
        (ended("cancelled", "something_new"), HERE, "Withdrawn", ""),
    ],
)
def test_each_ending_reads_as_the_viewer_sees_it(ending, viewer, sentence, where):
    settled = describe(ending, viewer_tab=viewer)
    assert (settled.sentence, settled.where, settled.at) == (sentence, where, SETTLED)


def test_the_notice_another_tab_gets_says_the_question_was_already_answered_and_by_whom():
    assert describe(ended(**BY_DEMO_HERE), viewer_tab=THERE, notice=True).sentence == (
        "This question was already answered by demo in another tab"
    )
    skipped = ended("rejected", "operator_skipped", **BY_DEMO_HERE)
    notice = describe(skipped, viewer_tab=THERE, notice=True)
    assert notice.sentence == "This question was skipped by demo in another tab"
    assert describe(ended(), notice=True).sentence == "This question was already answered"
    withdrawn = ended("cancelled", "turn_cancelled")
    assert describe(withdrawn, notice=True).sentence == describe(withdrawn).sentence


def test_an_open_question_has_no_ending_and_a_short_wait_no_duration():
    assert describe(Ending(status="pending")) is None
    quick = Ending("expired", "answer_timeout", asked_at=SETTLED - timedelta(seconds=5), settled_at=SETTLED)
    assert describe(quick).sentence == "Timed out with no answer"


def test_a_question_settled_on_another_day_says_so():
    assert describe(ended(), today=date(2026, 12, 1)).today
    assert not describe(ended(), today=date(2026, 12, 2)).today


def test_a_record_carries_its_ending():
    record = Clarification(
        status="answered",
        settled_reason="operator",
        created_at=ASKED,
        responded_at=SETTLED,
        answered_by=User(username="demo"),
        answered_via="task_page",
        answered_from=HERE,
    )
    assert ending_of_record(record) == ended(**BY_DEMO_HERE)
    assert ending_of_record(Clarification(status="pending", created_at=ASKED)).settled_at is None


@given(
    status=st.sampled_from(["answered", "rejected", "expired", "cancelled"]),
    reason=st.sampled_from(["operator", "operator_skipped", "undelivered", "answer_timeout", "turn_cancelled", "x"]),
    via=st.sampled_from(["", "task_page", "inbox", "board", "form", "api"]),
    answered_by=st.sampled_from(["", "demo", "<b>eve</b>"]),
    from_here=st.booleans(),
    viewer=st.sampled_from(["", HERE, THERE]),
)
def test_only_the_answering_page_is_this_tab_and_the_answerer_is_named_whenever_known(
    status, reason, via, answered_by, from_here, viewer
):
    ending = ended(status, reason, answered_by=answered_by, answered_via=via, answered_from=HERE if from_here else "")
    settled = describe(ending, viewer_tab=viewer)
    assert settled is not None
    assert settled.sentence
    if settled.where == "this_tab":
        assert via in ("task_page", "inbox", "board")
        assert from_here
        assert viewer == HERE
    if answered_by and via and status in ("answered", "rejected"):
        assert answered_by in settled.sentence
    if not answered_by:
        assert settled.where == ""
