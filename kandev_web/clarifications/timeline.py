"""A question as its timeline row shows it, read from its record.

Each question of a bundle has a ``clarification_request`` message in the
timeline; the message keeps only the link to its record (``pending_id``, and
which of the bundle's questions it is, ``question_index``). Everything the
row shows, whether it is open, what was answered, why and by whom it ended,
is read from the :class:`~.models.Clarification` row, the one place a
question's status is written (``actions``). A page renders many rows, so the
records of all of them are read at once (:func:`records_of`), not row by row.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from kandev_web.sessions.models import Message, MessageType

from .models import Clarification


def link(record: Clarification, index: int) -> dict:
    """What a ``clarification_request`` message keeps of its question: where to find it."""
    return {"pending_id": record.pending_id, "question_index": index}


@dataclass(frozen=True)
class AskedQuestion:
    """One question of ``record``, the ``index``-th of its bundle, as its timeline row shows it."""

    record: Clarification
    index: int

    @property
    def question(self) -> dict:
        questions = self.record.questions or []
        return questions[self.index] if 0 <= self.index < len(questions) else {}

    @property
    def question_id(self) -> str:
        return self.question.get("id", "")

    @property
    def total(self) -> int:
        return len(self.record.questions or [])

    @property
    def status(self) -> str:
        return self.record.status


def records_of(messages: Iterable[Message]) -> dict[str, Clarification]:
    """The records of the ``clarification_request`` messages among ``messages``, by ``pending_id``: one query."""
    pending_ids = {
        message.metadata.get("pending_id")
        for message in messages
        if message.type == MessageType.CLARIFICATION_REQUEST and isinstance(message.metadata, dict)
    }
    pending_ids.discard(None)
    if not pending_ids:
        return {}
    return {
        record.pending_id: record
        for record in Clarification.objects.filter(pending_id__in=pending_ids).select_related("answered_by")
    }


def asked(message: Message, records: dict[str, Clarification] | None = None) -> AskedQuestion | None:
    """The question ``message`` shows, from ``records`` (:func:`records_of`) or read alone; None for any other row.

    A message whose record is gone shows nothing of it (a record goes only with its session, and its messages).
    """
    if message.type != MessageType.CLARIFICATION_REQUEST or not isinstance(message.metadata, dict):
        return None
    pending_id = message.metadata.get("pending_id")
    if records is not None and pending_id in records:
        record: Clarification | None = records[pending_id]
    else:
        record = Clarification.objects.select_related("answered_by").filter(pending_id=pending_id).first()
    if record is None:
        return None
    index = message.metadata.get("question_index", 0)
    return AskedQuestion(record, index if isinstance(index, int) else 0)
