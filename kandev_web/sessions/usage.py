"""What an agent spends: its context window and its session's cost, from ACP ``usage_update``.

An agent reports, whenever it likes, how many tokens its context holds
(``used``) of how many it can (``size``), and optionally what the session
cost so far (``cost: {amount, currency}``, cumulative). kandev keeps the
latest report on the session, and what each report added to the day it came
on (``UsageDay``), so a board's spending per day is one query.

A task's budget (``Task.budget``) is compared with its sessions' costs in one
currency. Crossing it warns on the task page, its card and the inbox; it never
stops an agent: only an operator does that.

:func:`read_usage` is pure and takes anything an agent sends; what is not a
usable number is left out rather than failing the notification.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db.models import Count, DecimalField, F, Max, OuterRef, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from kandev_web import live

from .models import TaskSession, UsageDay

#: The largest token count or cost kept; beyond it a report is taken as garbage, not as spending.
MAX_TOKENS = 2**53
MAX_COST = Decimal("1e9")
_CURRENCY = re.compile(r"[A-Za-z]{3}")


@dataclass(frozen=True, slots=True)
class Usage:
    """One ``usage_update``, checked: each part ``None`` when the agent did not send a usable one."""

    used: int | None = None
    size: int | None = None
    cost: Decimal | None = None
    currency: str = ""


def read_usage(update: Mapping) -> Usage | None:
    """The usage an ACP ``usage_update`` reports; ``None`` if nothing in it is usable."""
    used, size = _tokens(update.get("used")), _tokens(update.get("size"))
    cost, currency = _cost(update.get("cost"))
    if used is None and size is None and cost is None:
        return None
    return Usage(used=used, size=size, cost=cost, currency=currency)


def _tokens(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def _cost(value: object) -> tuple[Decimal | None, str]:
    if not isinstance(value, Mapping):
        return None, ""
    amount, currency = value.get("amount"), value.get("currency")
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount):
        return None, ""
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        return None, ""
    try:
        cost = Decimal(str(amount)).quantize(Decimal("0.000001"))
    except InvalidOperation:
        return None, ""
    if not 0 <= cost < MAX_COST:
        return None, ""
    return cost, currency.upper()


def added_cost(before: Decimal | None, before_currency: str, now: Decimal, currency: str) -> Decimal:
    """What a report of cumulative cost ``now`` adds to the day it came on.

    A report in another currency, or lower than the last (the agent began
    counting again, as a restarted agent does), starts over: all of it is new.
    """
    if before is None or before_currency != currency or now < before:
        return now
    return now - before


def record_usage(session: TaskSession, update: Mapping) -> None:
    """Keep ``session``'s (locked by the caller) latest usage and add its new cost to today; announce it."""
    usage = read_usage(update)
    if usage is None:
        return
    fields: list[str] = []
    if usage.used is not None:
        session.context_used, fields = usage.used, [*fields, "context_used"]
    if usage.size is not None:
        session.context_size, fields = usage.size, [*fields, "context_size"]
    if usage.cost is not None:
        added = added_cost(session.cost, session.cost_currency, usage.cost, usage.currency)
        session.cost, session.cost_currency = usage.cost, usage.currency
        fields += ["cost", "cost_currency"]
        if added:
            day, _ = UsageDay.objects.get_or_create(session=session, day=timezone.now().date(), currency=usage.currency)
            UsageDay.objects.filter(pk=day.pk).update(cost=F("cost") + added)
    session.save(update_fields=[*fields, "updated_at"])
    task = session.task
    live.task_changed(task.pk, ["details", "session"])
    live.board_changed(task.board_id, step_ids=[], task_ids=[task.pk])
    if usage.cost is not None and task.budget is not None:
        live.waiting_changed(task.board.workspace_id, task.pk)


@dataclass(frozen=True, slots=True)
class Spent:
    """What a task's sessions cost: ``amount`` in ``currency``, or ``several`` currencies (no sum is shown)."""

    amount: Decimal
    currency: str
    several: bool = False

    def over(self, budget: Decimal | None) -> bool:
        return budget is not None and not self.several and self.amount > budget


def spent_annotations() -> dict:
    """Annotations giving each task its sessions' cost (``spent_amount``, ``spent_currency``, ``spent_currencies``)."""
    costs = TaskSession.objects.filter(task=OuterRef("pk"), cost__isnull=False).order_by().values("task")
    return {
        "spent_amount": Subquery(costs.annotate(total=Sum("cost")).values("total")[:1]),
        "spent_currency": Subquery(costs.annotate(currency=Max("cost_currency")).values("currency")[:1]),
        "spent_currencies": Coalesce(
            Subquery(costs.annotate(n=Count("cost_currency", distinct=True)).values("n")[:1]), Value(0)
        ),
    }


def context_used_annotation() -> Subquery:
    """An annotation giving each task the tokens of context its latest session to report them has used."""
    contexts = TaskSession.objects.filter(task=OuterRef("pk"), context_used__isnull=False).order_by("-pk")
    return Subquery(contexts.values("context_used")[:1])


def spent_of(task) -> Spent | None:
    """The :class:`Spent` of a task read with :func:`spent_annotations`; ``None`` when no cost was reported."""
    if getattr(task, "spent_amount", None) is None:
        return None
    return Spent(amount=task.spent_amount, currency=task.spent_currency, several=task.spent_currencies > 1)


def over_budget_tasks(tasks) -> list:
    """The tasks of ``tasks`` (a queryset) whose sessions cost more than their budget, in one query."""
    with_budget = tasks.filter(budget__isnull=False).annotate(**spent_annotations())
    return [task for task in with_budget if (spent := spent_of(task)) is not None and spent.over(task.budget)]


def totals_by_day(sessions, days: Iterable) -> dict:
    """Cost per (day, currency) of ``sessions`` on ``days``: ``{day: {currency: amount}}``, one query."""
    rows = (
        UsageDay.objects.filter(session__in=sessions, day__in=list(days))
        .values("day", "currency")
        .annotate(total=Sum("cost", output_field=DecimalField()))
        .order_by("day", "currency")
    )
    by_day: dict = {}
    for row in rows:
        by_day.setdefault(row["day"], {})[row["currency"]] = row["total"]
    return by_day
