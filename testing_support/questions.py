"""An agent's question as agentctl announces it (``elicitation.requested``), for the web app's tests.

Two questions: a single choice that also takes typed text, and a secret one (an API key).
"""

from kandev_web.clarifications import elicitations, timeline
from kandev_web.sessions.models import Message, MessageType

#: The announcement's payload, as agentctl sends it.
REQUESTED = {
    "pending_id": "7d3c9a52-0000-4000-8000-000000000001",
    "session_id": "acp-1",
    "tool_call_id": "toolu_1",
    "message": "Pick a colour",
    "questions": [
        {
            "id": "question_0",
            "title": "Colour",
            "prompt": "Pick a colour",
            "kind": "single",
            "accepts_text": True,
            "sensitive": False,
            "options": [{"id": "Red", "label": "Red", "description": "warm"}, {"id": "Blue", "label": "Blue"}],
        },
        {
            "id": "apiKey",
            "title": None,
            "prompt": "apiKey",
            "kind": "text",
            "accepts_text": True,
            "sensitive": True,
            "options": [],
        },
    ],
}


def requested(execution, **changes):
    """The announcement (with ``changes``) recorded for ``execution``, as the web app records it."""
    return elicitations.record_requested(execution.pk, execution.session_id, {**REQUESTED, **changes})


def timeline_rows() -> list[timeline.AskedQuestion]:
    """Every question's timeline row, in order, as the task page reads it (from its record)."""
    messages = Message.objects.filter(type=MessageType.CLARIFICATION_REQUEST).order_by("pk")
    rows = [timeline.asked(message) for message in messages]
    assert None not in rows, "a question's message without its record"
    return [row for row in rows if row is not None]


def timeline_row(question_id: str) -> timeline.AskedQuestion:
    """The timeline row of the question ``question_id``."""
    [row] = [row for row in timeline_rows() if row.question_id == question_id]
    return row
