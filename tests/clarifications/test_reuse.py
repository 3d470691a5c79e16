"""Which held bundle a repeated ask_user_question_kandev call gets (``reuse.reusable_bundle``)."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.clarifications.reuse import HeldBundle, reusable_bundle
from kandev_web.clarifications.validation import dedup_key, parse_bundle

KEY = dedup_key(
    parse_bundle(
        [
            {
                "prompt": "Which database?",
                "options": [
                    {"label": "Postgres", "description": "relational"},
                    {"label": "SQLite", "description": "embedded"},
                ],
            }
        ]
    )
)
OTHER_KEY = dedup_key(
    parse_bundle(
        [
            {
                "prompt": "Which database?",
                "options": [
                    {"label": "Postgres", "description": "relational"},
                    {"label": "MySQL", "description": "relational"},
                ],
            }
        ]
    )
)
STATUSES = ("pending", "answered", "rejected", "expired", "cancelled")


def bundle(pending_id="a", *, session_id=1, turn_id=10, key=KEY, status="pending", agent_disconnected=False):
    return HeldBundle(pending_id, session_id, turn_id, key, status, agent_disconnected)


def test_a_pending_bundle_is_reused():
    held = bundle(status="pending")
    assert reusable_bundle([held], session_id=1, turn_id=10, key=KEY) == held


def test_a_retried_call_in_the_same_turn_gets_the_answered_bundle():
    held = bundle(status="answered", turn_id=10)
    assert reusable_bundle([held], session_id=1, turn_id=10, key=KEY) == held


def test_the_same_questions_in_a_later_turn_are_a_new_bundle():
    held = bundle(status="answered", turn_id=10)
    assert reusable_bundle([held], session_id=1, turn_id=11, key=KEY) is None


def test_skipped_left_behind_and_other_sessions_bundles_are_never_reused():
    for held in (
        bundle(status="rejected"),
        bundle(status="expired"),
        bundle(agent_disconnected=True),
        bundle(status="answered", agent_disconnected=True),
        bundle(session_id=2),
    ):
        assert reusable_bundle([held], session_id=1, turn_id=10, key=KEY) is None, held
    assert reusable_bundle([bundle()], session_id=1, turn_id=10, key=OTHER_KEY) is None


def test_an_answered_bundle_is_not_reused_when_the_call_has_no_turn():
    assert reusable_bundle([bundle(status="answered", turn_id=None)], session_id=1, turn_id=None, key=KEY) is None


def test_a_pending_bundle_wins_over_an_answered_one():
    answered, pending = bundle("a", status="answered"), bundle("b", status="pending")
    assert reusable_bundle([answered, pending], session_id=1, turn_id=10, key=KEY) == pending


held_bundles = st.lists(
    st.builds(
        HeldBundle,
        pending_id=st.uuids().map(str),
        session_id=st.integers(1, 3),
        turn_id=st.none() | st.integers(1, 4),
        key=st.sampled_from([KEY, OTHER_KEY]),
        status=st.sampled_from(STATUSES),
        agent_disconnected=st.booleans(),
    ),
    max_size=8,
)


@given(held_bundles, st.integers(1, 3), st.none() | st.integers(1, 4), st.sampled_from([KEY, OTHER_KEY]))
def test_whatever_is_held_only_an_open_or_a_same_turn_answered_bundle_is_reused(held, session_id, turn_id, key):
    found = reusable_bundle(held, session_id=session_id, turn_id=turn_id, key=key)
    matching = [b for b in held if b.session_id == session_id and b.key == key and not b.agent_disconnected]
    if found is None:
        # Nothing was there to reuse: no open bundle, no answer given in this turn.
        assert not [b for b in matching if b.status == "pending"]
        assert turn_id is None or not [b for b in matching if b.status == "answered" and b.turn_id == turn_id]
        return
    assert found in matching
    assert found.status == "pending" or (found.status == "answered" and found.turn_id == turn_id is not None)
    if found.status == "answered":
        assert not [b for b in matching if b.status == "pending"]


@given(held_bundles, st.integers(1, 3), st.integers(1, 4))
def test_an_answer_from_an_earlier_turn_is_never_given_to_a_new_call(held, session_id, turn_id):
    found = reusable_bundle(held, session_id=session_id, turn_id=turn_id, key=KEY)
    assert found is None or found.status == "pending" or found.turn_id == turn_id
