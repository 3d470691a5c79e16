"""Who the overlay says is asking: only what the request itself shows, never a guess.

Every elicitation comes from the agent (ACP has no other requester), so the
agent profile is always named. Beyond that the request's shape shows one more
thing: the Claude bridge's refusal-fallback dialog, in which the agent offers
to retry on another model. Nothing on the wire shows that a form came from an
MCP server: the bridge forwards neither the server's name nor a
``toolCallId``, and its refusal dialog and some of its own questions have no
``toolCallId`` either. So no form is said to come from one
(``docs/decisions/operator.md#requester-identity``).
"""

from collections.abc import Mapping, Sequence
from enum import StrEnum

#: The refusal-fallback form's one property and its two choices (bridge 0.65.0 to 0.101.0).
REFUSAL_FALLBACK_KEY = "choice"
REFUSAL_FALLBACK_CHOICES = frozenset({"retry_fallback", "cancelled"})


class Requester(StrEnum):
    #: The agent asks; nothing more is known (its own tool call, or a form it forwards).
    AGENT = "agent"
    #: The bridge's refusal-fallback dialog: the agent offers to retry on another model.
    RETRY_OFFER = "retry-offer"


def requester(*, source: str, tool_call_id: str, questions: Sequence[Mapping]) -> Requester | None:
    """Who asks an elicitation-backed record's ``questions`` (as stored); ``None`` for Kandev's own tool.

    An ask_user_question_kandev bundle needs no requester line: it is always the agent's own call.
    """
    if source != "elicitation":
        return None
    if not tool_call_id and _is_refusal_fallback(questions):
        return Requester.RETRY_OFFER
    return Requester.AGENT


def _is_refusal_fallback(questions: Sequence[Mapping]) -> bool:
    """One untitled single choice keyed ``choice`` between exactly ``retry_fallback`` and ``cancelled``, no text."""
    if len(questions) != 1:
        return False
    (question,) = questions
    option_ids = [option.get("id") for option in question.get("options") or ()]
    return (
        question.get("id") == REFUSAL_FALLBACK_KEY
        and question.get("kind", "single") == "single"
        and not question.get("accepts_text")
        and not question.get("title")
        and len(option_ids) == len(REFUSAL_FALLBACK_CHOICES)
        and set(option_ids) == REFUSAL_FALLBACK_CHOICES
    )
