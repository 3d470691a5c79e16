"""What became of an operator's answer: one shape for both question paths and every surface."""

from dataclasses import dataclass
from enum import StrEnum

from .problems import QuestionProblem


class Outcome(StrEnum):
    DELIVERED = "delivered"
    #: The agent had moved on; the answer went to it as a new prompt.
    RESUMED = "resumed"
    #: Someone answered first, or the agent withdrew the question.
    ALREADY_SETTLED = "already_settled"
    #: The answer does not fit the question; the question stays open.
    INVALID = "invalid"
    #: No connection to the agent's controller right now; the question stays open.
    STREAM_DOWN = "stream_down"
    #: The agent's controller did not confirm in time; the question stays open.
    NOT_RESPONDING = "not_responding"
    #: The agent had moved on and is busy with another turn; the answer is kept as a record only.
    AGENT_BUSY = "agent_busy"
    #: The agent is gone; the answer is kept as a record only.
    AGENT_GONE = "agent_gone"
    REFUSED = "refused"
    #: The socket's frame was not an answer this server can read; nothing changed.
    BAD_FRAME = "bad_frame"
    #: No question by that id that this operator may answer on this page.
    UNKNOWN_QUESTION = "unknown"


@dataclass(frozen=True)
class Delivery:
    outcome: Outcome
    #: What the operator is told; empty when the settled question says it all.
    message: str = ""
    level: str = "info"
    problems: tuple[str, ...] = ()
    #: The same problems, each with the question it is shown beside in the overlay.
    by_question: tuple[QuestionProblem, ...] = ()

    @property
    def delivered(self) -> bool:
        return self.outcome in (Outcome.DELIVERED, Outcome.RESUMED)
