"""What the operator's agents spent: per board, and per day over the last two weeks (``sessions.usage``)."""

from datetime import timedelta

from django.db.models import Count, Sum
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from kandev_web.board.models import Board
from kandev_web.sessions.models import TaskSession
from kandev_web.sessions.usage import totals_by_day

#: How many days the page lists, today included.
DAYS = 14


@require_GET
def usage(request):
    boards = Board.objects.for_user(request.user)
    sessions = TaskSession.objects.filter(task__board__in=boards, cost__isnull=False)
    by_board = (
        sessions.values("task__board", "task__board__name", "cost_currency")
        .annotate(total=Sum("cost"), sessions=Count("pk"), tasks=Count("task", distinct=True))
        .order_by("task__board__name", "task__board", "cost_currency")
    )
    today = timezone.now().date()
    days = [today - timedelta(days=n) for n in range(DAYS)]
    spent = totals_by_day(sessions, days)
    context = {
        "by_board": list(by_board),
        "by_day": [(day, sorted(spent.get(day, {}).items())) for day in days],
        "days": DAYS,
    }
    return render(request, "usage/usage.html", context)
