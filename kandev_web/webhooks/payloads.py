"""What a webhook says: ids, the task's title and a link, and never what was asked or answered.

Pure functions, so the shape is tested for any title without a database.
Question text, answers and prompts stay out on purpose: a webhook's receiver
is a chat room or a script outside kandev, and a question may be sensitive.
"""

import json
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Subject:
    """The task an event is about, with its board and workspace: ids and names only."""

    workspace_id: int
    workspace_name: str
    board_id: int
    board_name: str
    task_id: int
    task_title: str
    task_url: str
    session_id: int


def build(
    event: str,
    *,
    delivery: str,
    occurred_at: datetime,
    subject: Subject | None,
    workspace: tuple[int, str],
    question: tuple[str, str, str] | None = None,
    question_mode: str = "form",
) -> dict:
    """The payload of one delivery. ``question`` is ``(pending id, source, status)``; ``subject`` is
    ``None`` only for a test event, which is about the workspace alone. A URL-mode question (a page
    to open) says ``"mode": "url"``, never its address; a form's payload is as it always was."""
    payload: dict = {
        "event": event,
        "delivery": delivery,
        "occurred_at": occurred_at.isoformat(),
        "workspace": {"id": workspace[0], "name": workspace[1]},
    }
    if subject is not None:
        payload["board"] = {"id": subject.board_id, "name": subject.board_name}
        payload["task"] = {"id": subject.task_id, "title": subject.task_title, "url": subject.task_url}
        payload["session"] = {"id": subject.session_id}
    if question is not None:
        payload["question"] = {"id": question[0], "source": question[1], "status": question[2]}
        if question_mode == "url":
            payload["question"]["mode"] = "url"
    return payload


def encode(payload: dict) -> bytes:
    """The exact bytes sent, and signed: compact UTF-8 JSON, the same on every retry."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
