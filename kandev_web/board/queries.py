"""Read models for the board and task list, in a constant number of queries.

A card needs its task, its primary session's state and activity, and the
task's pending action; these are fetched for all cards at once, never per card.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import OuterRef, Subquery

from kandev_web.sessions.models import ACTIVE_SESSION_STATES, TaskSession
from kandev_web.sessions.pending import PendingAction, pending_actions, task_pending_action

from .models import Board, Step, Task
from .state_icons import StateIcon, task_state_icon


@dataclass
class Card:
    task: Task
    icon: StateIcon
    pending_action: PendingAction


@dataclass
class Column:
    step: Step
    cards: list[Card] = field(default_factory=list)
    prev_step: Step | None = None
    next_step: Step | None = None

    @property
    def count(self) -> int:
        return len(self.cards)


def cards_for(tasks) -> list[Card]:
    """Cards for a task queryset (already filtered for access), in its order."""
    primary = TaskSession.objects.filter(task=OuterRef("pk")).order_by("-created_at", "-pk")
    tasks = list(
        tasks.select_related("step").annotate(
            session_state=Subquery(primary.values("state")[:1]),
            session_activity=Subquery(primary.values("activity")[:1]),
        )
    )
    if not tasks:
        return []
    active = TaskSession.objects.filter(
        task__in=[t.pk for t in tasks], state__in=ACTIVE_SESSION_STATES
    )
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
        cards.append(Card(task=task, icon=icon, pending_action=action))
    return cards


def _last_step_ids(board_ids: set[int]) -> set[int]:
    last = Step.objects.filter(board=OuterRef("board")).order_by("-position", "-pk").values("pk")[:1]
    return set(Step.objects.filter(board__in=board_ids, pk=Subquery(last)).values_list("pk", flat=True))


def board_columns(board: Board, step_ids: list[int] | None = None) -> list[Column]:
    """The board's columns (or only ``step_ids``), each with its cards."""
    steps = list(board.steps.all())
    columns = {step.pk: Column(step=step) for step in steps}
    for before, after in zip(steps, steps[1:]):
        columns[before.pk].next_step = after
        columns[after.pk].prev_step = before
    wanted = step_ids if step_ids is not None else list(columns)
    tasks = Task.objects.filter(board=board, step__in=wanted).order_by("position", "pk")
    for card in cards_for(tasks):
        columns[card.task.step_id].cards.append(card)
    return [columns[pk] for pk in columns if pk in wanted]
