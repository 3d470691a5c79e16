"""Mock-agent sessions streaming chunks through a real server: what ``streaming`` measures, and a load for ``latency``.

``Sessions`` starts N sessions of the demo's Mock agent profile on a running
server, as an operator does over HTTP, each on a task of its own; a prompt
``/e2e:stream-chunks M R`` then has one stream M chunks at R a second
(``kandev_web/mock_agent/scenarios/stream-chunks.json``), each saying its
number and the time the agent sent it. ``Background`` keeps such streams
going, with no page watching them, for as long as another measurement takes.

What was streamed is read back from the server's SQLite file (read-only).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from benchmarks import support
from benchmarks.frozen import Operator

WORKSPACE = "Streaming bench"
#: What each chunk says (``kandev_web/mock_agent/scenarios/stream-chunks.json``).
CHUNK = re.compile(r"chunk (\d+) sent at (\d+\.\d+)")


class Database:
    """The server's SQLite file, read (never written) by the benchmark."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def rows(self, sql: str, *params) -> list[tuple]:
        with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)) as connection:
            return connection.execute(sql, params).fetchall()

    def profile_id(self, workspace_id: int) -> int:
        [(pk,)] = self.rows(
            "SELECT id FROM agent_sessions_agentprofile WHERE workspace_id = ? AND name = 'Mock agent'", workspace_id
        )
        return pk

    def session_of(self, task_id: int) -> int | None:
        found = self.rows("SELECT id FROM agent_sessions_tasksession WHERE task_id = ? ORDER BY id DESC", task_id)
        return found[0][0] if found else None

    def last_turn(self, session_id: int) -> tuple[int | None, str | None]:
        """The session's latest turn: its id and when it ended (None while it is open, or there is none)."""
        found = self.rows(
            "SELECT id, completed_at FROM agent_sessions_turn WHERE session_id = ? ORDER BY started_at DESC, id DESC"
            " LIMIT 1",
            session_id,
        )
        return found[0] if found else (None, None)

    def streamed(self, turn_id: int) -> str:
        found = self.rows(
            "SELECT content FROM agent_sessions_message"
            " WHERE turn_id = ? AND type = 'message' AND author_type = 'agent' ORDER BY id",
            turn_id,
        )
        return "".join(content for (content,) in found)

    def streamed_by(self, session_ids: list[int]) -> str:
        """Everything the agents of these sessions said, in all their turns."""
        found = self.rows(
            "SELECT message.content FROM agent_sessions_message AS message"
            " JOIN agent_sessions_turn AS turn ON message.turn_id = turn.id"
            " WHERE turn.session_id IN (SELECT value FROM json_each(?))"
            " AND message.type = 'message' AND message.author_type = 'agent'",
            json.dumps(session_ids),
        )
        return "".join(content for (content,) in found)


class Sessions:
    """N started Mock agent sessions of one operator ("streamer"), each on a task of its own, their first turn over."""

    def __init__(self, server: support.Server, database: Database, sessions: int) -> None:
        self.server, self.database = server, database
        ids = server.create_operator("streamer", workspace=WORKSPACE, tasks=False)
        self.operator = Operator(server, "streamer")
        profile = database.profile_id(ids["workspace_id"])
        board, step = ids["board_id"], ids["step_ids"][0]
        self.task_ids = [self.operator.create_task(board, step, f"Stream {index}") for index in range(sessions)]
        for task_id in self.task_ids:
            self.post(f"/tasks/{task_id}/sessions/", {"profile": str(profile), "prompt": "/e2e:simple-message"})
        self.session_ids = self.wait(lambda: [database.session_of(task) for task in self.task_ids], "sessions")
        self.wait_for_turns(self.session_ids, timeout=30 + 5 * sessions)

    def post(self, path: str, data: dict[str, str]) -> None:
        headers = {"X-CSRFToken": self.operator.http.cookies["csrftoken"], "HX-Request": "true"}
        response = self.operator.http.post(path, data=data, headers=headers)
        if response.status_code != 204:
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:300]}")

    def prompt(self, session_id: int, prompt: str) -> None:
        self.post(f"/sessions/{session_id}/prompt/", {"prompt": prompt})

    def wait(self, read, what: str, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        while not all(value := read()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"waited {timeout} s for {what}")
            time.sleep(0.1)
        return value

    def wait_for_turns(self, session_ids: list[int], timeout: float, samples: list | None = None) -> list[str]:
        """When each session's latest turn ended, once all have; ``samples`` gets (time, server CPU) meanwhile."""

        def ended():
            if samples is not None:
                samples.append((time.time(), support.cpu_seconds(self.server.pid)))
            return [self.database.last_turn(session)[1] for session in session_ids]

        return self.wait(ended, "the turns to end", timeout)


class Background:
    """Every session streaming ``rate`` chunks a second, from the block's start until its end.

    Each turn streams ``turn_seconds`` worth of chunks; a thread of its own
    prompts a session again as soon as its turn is recorded as over, so the
    load lasts however long the measurement in the block takes (but for a
    poll and a turn's start between two turns). The block starts once every
    session has a chunk recorded; at its end no turn is started any more, and
    a turn under way streams on until the server stops.
    """

    POLL_SECONDS = 0.2

    def __init__(self, sessions: Sessions, rate: float, *, turn_seconds: float = 60.0) -> None:
        self.sessions = sessions
        self.rate = rate
        self.prompt = f"/e2e:stream-chunks {max(round(rate * turn_seconds), 1)} {rate:g}"
        #: Turns prompted so far.
        self.turns = 0
        self._stop = threading.Event()
        self._error: BaseException | None = None
        #: Each session's turn that was last seen before its latest prompt: over, not to be prompted again.
        self._before: dict[int, int | None] = {}
        self._keeping = threading.Thread(target=self._keep, name="background-streams", daemon=True)

    def __enter__(self) -> Background:
        database = self.sessions.database
        for session in self.sessions.session_ids:
            self._start_turn(session, database.last_turn(session)[0])
        self._keeping.start()
        try:
            self.sessions.wait(
                lambda: [
                    CHUNK.search(database.streamed(turn)) if turn != self._before[session] and turn else None
                    for session in self.sessions.session_ids
                    for turn in [database.last_turn(session)[0]]
                ],
                "every background stream's first chunk",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _start_turn(self, session: int, over: int | None) -> None:
        self._before[session] = over
        self.sessions.prompt(session, self.prompt)
        self.turns += 1

    def _keep(self) -> None:
        database = self.sessions.database
        try:
            while not self._stop.wait(self.POLL_SECONDS):
                for session in self.sessions.session_ids:
                    turn, ended = database.last_turn(session)
                    if turn != self._before[session] and ended is not None:
                        self._start_turn(session, turn)
        except BaseException as error:  # handed to the measuring thread by stop()
            self._error = error

    def stop(self) -> None:
        """Start no more turns; raise what stopped the thread early, if anything did."""
        self._stop.set()
        if self._keeping.is_alive():
            self._keeping.join(timeout=30)
        if self._error is not None:
            raise RuntimeError("the background streams stopped early") from self._error

    def recorded(self, since: float, until: float) -> int:
        """How many chunks the agents sent between ``since`` and ``until`` (``time.time()``) the server recorded."""
        text = self.sessions.database.streamed_by(self.sessions.session_ids)
        return sum(since <= float(sent) <= until for _, sent in CHUNK.findall(text))
