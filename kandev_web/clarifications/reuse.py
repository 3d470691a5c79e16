"""When an ask_user_question_kandev call gets a bundle already asked instead of a new one.

Kandev reuses a *pending* bundle with the same normalised questions on the
same session, so an agent that asks twice does not ask the operator twice.
An answered bundle is reused only within the turn that asked it: that is a
retried call (a dropped connection, a client timeout), and it gets the answer
already given. The same questions in a later turn are a new question the
operator must see, and a skipped or left-behind bundle is never reused
(``docs/decisions/board-and-timeline.md#bundle-reuse``). Pure: the caller reads the candidates.
"""

from collections.abc import Iterable
from dataclasses import dataclass

PENDING, ANSWERED = "pending", "answered"


@dataclass(frozen=True)
class HeldBundle:
    """What the rule reads of one ask_user_question_kandev record."""

    pending_id: str
    session_id: int
    turn_id: int | None
    #: ``validation.dedup_key`` of its questions: prompts and options, in order; None matches no new call.
    key: list | None
    status: str
    #: Left behind: its turn ended or its agent went away while it was open.
    agent_disconnected: bool


def reusable_bundle(
    held: Iterable[HeldBundle], *, session_id: int, turn_id: int | None, key: list
) -> HeldBundle | None:
    """The bundle a new call with questions ``key`` in ``turn_id`` of ``session_id`` gets, or None for a new one.

    A pending bundle wins over an answered one (the operator is still to be
    asked); among equals the first held.
    """
    same = [
        bundle
        for bundle in held
        if bundle.session_id == session_id and bundle.key == key and not bundle.agent_disconnected
    ]
    pending = [bundle for bundle in same if bundle.status == PENDING]
    if pending:
        return pending[0]
    if turn_id is None:
        return None  # no turn to be the same one
    retried = [bundle for bundle in same if bundle.status == ANSWERED and bundle.turn_id == turn_id]
    return retried[0] if retried else None
