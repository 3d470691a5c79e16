"""The inbox page: everything waiting on the operator, answerable in place."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from .queries import over_budget, waiting_items


@require_GET
def inbox(request):
    context = {"items": waiting_items(request.user), "over_budget": over_budget(request.user)}
    return render(request, "inbox/inbox.html", context)
