"""The inbox page: everything waiting on the operator, answerable in place."""

from django.shortcuts import render

from .queries import waiting_items


def inbox(request):
    return render(request, "inbox/inbox.html", {"items": waiting_items(request.user)})
