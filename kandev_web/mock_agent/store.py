"""Where the mock agent keeps its conversations, so that a later process of it can take one up.

A real agent (the Claude bridge, say) keeps each session on disk and answers
``session/resume`` or ``session/load`` for it after a restart; tests of
resuming need an agent that does the same. With ``KANDEV_MOCK_SESSION_DIR``
naming a directory, the mock agent writes each session there as
``<session id>.json``::

    {"cwd": "/work", "history": [{"role": "user", "text": "..."}, {"role": "agent", "text": "..."}]}

rewritten whole (through a temporary file, so a killed agent leaves the last
complete one) when a prompt arrives and when its answer is done. Without the
variable nothing is stored and the mock agent behaves as it always did.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ENV_VAR = "KANDEV_MOCK_SESSION_DIR"

#: The session ids the mock agent makes (``mock-<12 hex digits>``); anything
#: else names no stored session, and never a path outside the directory.
_SESSION_ID = re.compile(r"mock-[0-9a-f]{12}")

Role = Literal["user", "agent"]


@dataclass
class Entry:
    role: Role
    text: str


@dataclass
class Conversation:
    cwd: str
    history: list[Entry] = field(default_factory=list)

    def said_by(self, role: Role) -> list[str]:
        return [entry.text for entry in self.history if entry.role == role]


class SessionStore:
    """One JSON file per session in a directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def from_environment(cls) -> SessionStore | None:
        directory = os.environ.get(ENV_VAR)
        return cls(Path(directory)) if directory else None

    def save(self, session_id: str, conversation: Conversation) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {
            "cwd": conversation.cwd,
            "history": [{"role": entry.role, "text": entry.text} for entry in conversation.history],
        }
        with tempfile.NamedTemporaryFile("w", dir=self.directory, suffix=".tmp", delete=False) as file:
            json.dump(data, file, ensure_ascii=False)
        os.replace(file.name, self._path(session_id))

    def load(self, session_id: str) -> Conversation | None:
        """The stored conversation, or None when no session of that id was stored here."""
        if not _SESSION_ID.fullmatch(session_id):
            return None
        try:
            data = json.loads(self._path(session_id).read_text())
        except FileNotFoundError:
            return None
        history = [Entry(role=entry["role"], text=entry["text"]) for entry in data["history"]]
        return Conversation(cwd=data["cwd"], history=history)

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.json"
