"""Read models for the board and task list, in a constant number of queries.

A card needs its task, its primary session's state and activity, and the
task's pending action; these are fetched for all cards at once, never per card.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from django.db.models import Count, F, OuterRef, Q, Subquery, Window
from django.db.models.functions import RowNumber

from kandev_web import socket_input
from kandev_web.board.models import Board, Step, Task
from kandev_web.sessions.models import ACTIVE_SESSION_STATES, TaskSession
from kandev_web.sessions.pending import PendingAction, pending_actions, task_pending_action
from kandev_web.sessions.usage import Spent, context_used_annotation, spent_annotations, spent_of

from .filters import BoardFilter
from .state_icons import StateIcon, task_state_icon

#: What a board shows when the operator searched and filtered for nothing.
NO_FILTER = BoardFilter()

#: Cards a column shows before its "Show more" button; each click shows as many again.
CARDS_PER_PAGE = 50


@dataclass
class Card:
    task: Task
    icon: StateIcon
    pending_action: PendingAction
    #: What the task's agents reported they spent (``None``: nothing reported).
    spent: Spent | None = None
    #: The tokens of context its latest session to report them has used (``None``: none reported).
    context_used: int | None = None

    @property
    def over_budget(self) -> bool:
        return self.spent is not None and self.spent.over(self.task.budget)


@dataclass
class Column:
    """One step of the board: its task count and the cards this page shows (a prefix in order)."""

    step: Step
    cards: list[Card] = field(default_factory=list)
    prev_step: Step | None = None
    next_step: Step | None = None
    count: int = 0
    more: bool = False
    #: A card shown although it sorts past ``cards`` (the task page's own task, beyond its step's page).
    pinned: Card | None = None

    @property
    def through(self) -> str:
        """The sort key of the last card shown when more follow ("" when none do): where "Show more" resumes."""
        return self.cards[-1].task.sort_key if self.more and self.cards else ""


def cards_for(tasks) -> list[Card]:
    """Cards for a task queryset (already filtered for access), in its order."""
    primary = TaskSession.objects.filter(task=OuterRef("pk")).order_by("-created_at", "-pk")
    tasks = list(
        tasks.select_related("step").annotate(
            session_state=Subquery(primary.values("state")[:1]),
            session_activity=Subquery(primary.values("activity")[:1]),
            # Set once an agent made the task's worktree: its Delete then offers to remove it too.
            worktree_branch=F("worktree__branch"),
            **spent_annotations(),
            context_used=context_used_annotation(),
        )
    )
    if not tasks:
        return []
    active = TaskSession.objects.filter(task__in=[t.pk for t in tasks], state__in=ACTIVE_SESSION_STATES)
    session_tasks = dict(active.values_list("pk", "task_id"))
    by_task: dict[int, list[PendingAction]] = defaultdict(list)
    for session_id, action in pending_actions(active).items():
        by_task[session_tasks[session_id]].append(action)
    last_step_ids = _last_step_ids({t.board_id for t in tasks})

    cards = []
    for task in tasks:
        action = task_pending_action(by_task.get(task.pk, ()))
        icon = task_state_icon(
            task_state=task.state,
            session_state=task.session_state,
            activity=task.session_activity or "",
            pending_action=action,
            on_last_step=task.step_id in last_step_ids,
        )
        cards.append(
            Card(task=task, icon=icon, pending_action=action, spent=spent_of(task), context_used=task.context_used)
        )
    return cards


def _last_step_ids(board_ids: set[int]) -> set[int]:
    last = Step.objects.filter(board=OuterRef("board")).order_by("-position", "-pk").values("pk")[:1]
    return set(Step.objects.filter(board__in=board_ids, pk=Subquery(last)).values_list("pk", flat=True))


def parse_sort_key(value: str) -> tuple[int, int]:
    """A sort key as pages send it back ("position,id", see ``Task.sort_key``); ``ValueError`` if it is not one."""
    position, pk = (socket_input.column_int(part) for part in value.split(","))
    return position, pk


def parse_shown_through(values: Iterable[str]) -> dict[int, tuple[int, int]]:
    """How far a reconnecting page shows its columns: "step id:sort key" each, the ``data-through`` it has.

    Anything malformed is left out: that column is then read as a fresh page
    shows it, which is never wrong, only shorter.
    """
    through = {}
    for value in values:
        step_id, _, key = value.partition(":")
        try:
            through[socket_input.column_int(step_id)] = parse_sort_key(key)
        except ValueError:
            continue
    return through


def _columns(board: Board | int) -> dict[int, Column]:
    """An empty column per step, in order, each knowing its neighbours (for the move buttons)."""
    steps = list(Step.objects.filter(board=board).order_by("position", "pk"))
    columns = {step.pk: Column(step=step) for step in steps}
    for before, after in pairwise(steps):
        columns[before.pk].next_step = after
        columns[after.pk].prev_step = before
    return columns


def _in_column_order(pks) -> list[Card]:
    return cards_for(Task.objects.filter(pk__in=pks).order_by("position", "pk"))


def board_columns(
    board: Board,
    *,
    pinned_task_id: int | None = None,
    through: Mapping[int, tuple[int, int]] | None = None,
    shown: BoardFilter = NO_FILTER,
) -> list[Column]:
    """Every column with its count and its first ``CARDS_PER_PAGE`` cards.

    One query ranks the tasks within their step and counts them, whatever the
    board's size; only the first page of each column is then read as cards.
    ``pinned_task_id`` (a task of this board) is read with them, in the same
    queries, and is its column's ``pinned`` card when it is not on the first page.
    ``through`` maps a step to the sort key a page had shown it up to with
    "Show more": that column shows every card up to it, however many pages.
    ``shown`` is what the operator searched or filtered for: the counts and
    pages are of the tasks that match it.
    """
    columns = _columns(board)
    on_page = Q(rank__lte=CARDS_PER_PAGE)
    for step_id, (position, pk) in (through or {}).items():
        on_page |= Q(step=step_id) & (Q(position__lt=position) | Q(position=position, pk__lte=pk))
    shown_rows = list(
        shown.apply(Task.objects.filter(board=board), board.pk)
        .order_by()
        .annotate(
            rank=Window(RowNumber(), partition_by=F("step"), order_by=(F("position").asc(), F("pk").asc())),
            in_step=Window(Count("pk"), partition_by=F("step")),
        )
        .filter(on_page)
        .values_list("pk", "step_id", "in_step")
    )
    for _, step_id, in_step in shown_rows:
        columns[step_id].count = in_step
    on_pages = [pk for pk, _, _ in shown_rows]
    pinned = {pinned_task_id} - set(on_pages) - {None}
    for card in _in_column_order([*on_pages, *pinned]):
        column = columns[card.task.step_id]
        if card.task.pk in pinned:
            column.pinned = card
        else:
            column.cards.append(card)
    for column in columns.values():
        column.more = column.count > len(column.cards)
    return list(columns.values())


def column_page(board: Board, step_id: int, after: tuple[int, int], shown: BoardFilter = NO_FILTER) -> Column:
    """The next ``CARDS_PER_PAGE`` cards of one column after the sort key ``after`` (position, pk).

    Keyed on the last card shown rather than an offset, so cards moved or
    deleted meanwhile neither repeat nor skip one.
    """
    column = _columns(board)[step_id]
    position, pk = after
    in_step = shown.apply(Task.objects.filter(step=column.step), board.pk)
    following = in_step.filter(Q(position__gt=position) | Q(position=position, pk__gt=pk))
    pks = list(following.order_by("position", "pk").values_list("pk", flat=True)[: CARDS_PER_PAGE + 1])
    column.cards = _in_column_order(pks[:CARDS_PER_PAGE])
    column.more = len(pks) > CARDS_PER_PAGE
    column.count = in_step.count()
    return column


def changed_cards(
    board: Board | int, *, step_ids, task_ids, shown: BoardFilter = NO_FILTER
) -> tuple[list[Column], list[int]]:
    """What a live patch of the board (or of a task page's task list) shows after ``task_ids`` changed.

    The columns of ``step_ids`` (and of the changed tasks) with their counts,
    each holding only the changed cards now in it; and the ids of the tasks
    that are gone, or no longer match ``shown``.
    """
    board_id = board if isinstance(board, int) else board.pk
    columns = _columns(board)
    cards = cards_for(shown.apply(Task.objects.filter(board=board, pk__in=task_ids), board_id))
    for card in cards:
        columns[card.task.step_id].cards.append(card)
    wanted = (set(step_ids) | {card.task.step_id for card in cards}) & columns.keys()
    in_steps = shown.apply(Task.objects.filter(board=board, step__in=wanted), board_id).order_by().values("step")
    counts = dict(in_steps.annotate(n=Count("pk")).values_list("step", "n"))
    for step_id in wanted:
        columns[step_id].count = counts.get(step_id, 0)
    gone = sorted(set(task_ids) - {card.task.pk for card in cards})
    return [column for pk, column in columns.items() if pk in wanted], gone
