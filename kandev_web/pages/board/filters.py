"""What a board shows when an operator searches or filters it: read from its URL, applied in the database.

A filter is part of the board's URL (``?q=…&state=waiting&profile=3``), so a
filtered board can be bookmarked and shared. The same query string is on the
board's socket URL, so its live patches and catch-ups are filtered as the
page is: a card that stops matching leaves, one that starts matching arrives.

Parsing never fails: a value that is not one of the board's states or not an
id is left out, and the board shows what the rest asks for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from django.db.models import Case, CharField, Exists, OuterRef, Q, QuerySet, Subquery, Value, When
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from kandev_web import socket_input
from kandev_web.board.models import TaskState
from kandev_web.sessions.models import ACTIVE_SESSION_STATES, Activity, SessionState, TaskSession
from kandev_web.sessions.pending import pending_actions
from kandev_web.storable import storable_text

#: The longest search a board reads; what follows is ignored.
MAX_SEARCH_CHARS = 200
#: The most profiles or repositories one filter names: more are ignored.
MAX_IDS = 50

WAITING, RUNNING, FAILED, DONE = "waiting", "running", "failed", "done"
#: The state chips, in the order the board shows them, with their labels.
STATES = {
    WAITING: _("Waiting on me"),
    RUNNING: _("Running"),
    FAILED: _("Failed"),
    DONE: _("Done"),
}


@dataclass(frozen=True)
class BoardFilter:
    """Which cards a board shows: all of them when nothing is set.

    Within states, profiles and repositories any one chosen matches; the
    search and the three groups must all match.
    """

    text: str = ""
    states: frozenset[str] = field(default_factory=frozenset)
    profiles: frozenset[int] = field(default_factory=frozenset)
    repositories: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def from_query(cls, query: QueryDict) -> BoardFilter:
        return cls(
            text=" ".join(storable_text(query.get("q", ""))[:MAX_SEARCH_CHARS].split()),
            states=frozenset(state for state in query.getlist("state") if state in STATES),
            profiles=_ids(query.getlist("profile")),
            repositories=_ids(query.getlist("repository")),
        )

    @classmethod
    def of_page(cls, request) -> BoardFilter:
        """The filter of the board page an htmx request came from (``HX-Current-URL``), so its patch fits it."""
        return cls.from_query(QueryDict(urlsplit(request.headers.get("HX-Current-URL", "")).query))

    def __bool__(self) -> bool:
        return bool(self.text or self.states or self.profiles or self.repositories)

    def query_string(self) -> str:
        """The filter as a URL's query string, in a stable order ("" when nothing is set)."""
        pairs: list[tuple[str, object]] = [("q", self.text)] if self.text else []
        pairs += [("state", state) for state in STATES if state in self.states]
        pairs += [("profile", pk) for pk in sorted(self.profiles)]
        pairs += [("repository", pk) for pk in sorted(self.repositories)]
        return urlencode(pairs)

    def toggled(self, group: str, value: str | int) -> str:
        """The query string with ``value`` of ``group`` ("state", "profile", "repository") added or taken away."""
        chosen = {"state": self.states, "profile": self.profiles, "repository": self.repositories}[group]
        changed = chosen ^ {value}
        return BoardFilter(
            text=self.text,
            states=changed if group == "state" else self.states,  # type: ignore[arg-type]
            profiles=changed if group == "profile" else self.profiles,  # type: ignore[arg-type]
            repositories=changed if group == "repository" else self.repositories,  # type: ignore[arg-type]
        ).query_string()

    def apply(self, tasks: QuerySet, board_id: int) -> QuerySet:
        """``tasks`` (of board ``board_id``) narrowed to what this filter matches: one query, whatever it sets."""
        if self.text:
            tasks = tasks.filter(
                Q(title__icontains=self.text)
                | Q(description__icontains=self.text)
                | Q(worktree__branch__icontains=self.text)
            )
        if self.profiles:
            used = TaskSession.objects.filter(task=OuterRef("pk"), agent_profile__in=self.profiles)
            tasks = tasks.filter(Exists(used))
        if self.repositories:
            tasks = tasks.filter(worktree__repository__in=self.repositories)
        if self.states:
            tasks = with_board_state(tasks, _waiting_task_ids(board_id)).filter(board_state__in=self.states)
        return tasks


def _ids(values: Iterable[str]) -> frozenset[int]:
    ids = set()
    for value in values:
        try:
            pk = socket_input.column_int(value)
        except ValueError:
            continue
        if pk > 0:
            ids.add(pk)
    return frozenset(sorted(ids)[:MAX_IDS])


def _waiting_task_ids(board_id: int) -> list[int]:
    """The board's tasks with a question or permission request pending, by the rules the cards' icons use."""
    active = TaskSession.objects.filter(task__board=board_id, state__in=ACTIVE_SESSION_STATES)
    waiting_sessions = list(pending_actions(active))
    return list(TaskSession.objects.filter(pk__in=waiting_sessions).values_list("task_id", flat=True))


def with_board_state(tasks: QuerySet, waiting_task_ids: list[int]) -> QuerySet:
    """``tasks`` with ``board_state``: its state chip, by the precedence of its card's icon (``state_icons``).

    Waiting: either pending icon; running: working, in the background or being
    prepared; failed: interrupted; done: finished its turn or its workflow;
    anything else (not started) matches no chip.
    """
    primary = TaskSession.objects.filter(task=OuterRef("pk")).order_by("-created_at", "-pk")
    tasks = tasks.alias(
        primary_state=Subquery(primary.values("state")[:1]),
        primary_activity=Subquery(primary.values("activity")[:1]),
    )
    return tasks.alias(
        board_state=Case(
            When(pk__in=waiting_task_ids, then=Value(WAITING)),
            When(primary_activity__in=[Activity.GENERATING, Activity.BACKGROUND], then=Value(RUNNING)),
            When(state=TaskState.WAITING_FOR_INPUT, then=Value(WAITING)),
            When(Q(state=TaskState.SCHEDULING) | Q(primary_state=SessionState.STARTING), then=Value(RUNNING)),
            When(state=TaskState.IN_PROGRESS, then=Value(RUNNING)),
            When(
                Q(primary_state__in=[SessionState.FAILED, SessionState.CANCELLED])
                & ~Q(state__in=[TaskState.COMPLETED, TaskState.REVIEW]),
                then=Value(FAILED),
            ),
            When(state=TaskState.REVIEW, then=Value(DONE)),
            default=Value(""),
            output_field=CharField(),
        )
    )
