"""The workspace's webhooks page: add one (its secret shown once), switch it off, remove it, test it, read its log.

The workspace's admins only, like the agent profiles page (``workspace_admin_required``).
"""

from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from kandev_web.board.workspaces import managed_workspace, workspace_admin_required

from . import services, signing
from .forms import WebhookForm
from .models import Webhook

TEMPLATE = "webhooks/webhooks.html"


def _webhook(user, workspace_id, webhook_id) -> Webhook:
    return get_object_or_404(Webhook.objects.for_user(user), workspace=workspace_id, pk=webhook_id)


def _page(request, workspace, form, *, created=None, status=200):
    hooks = Webhook.objects.filter(workspace=workspace)
    context = {
        "workspace": workspace,
        "webhooks": [(hook, services.recent_deliveries(hook)) for hook in hooks],
        "form": form,
        "created": created,
        "created_secret": created.signing_secret() if created is not None else "",
        "signature_header": signing.SIGNATURE_HEADER,
    }
    return render(request, TEMPLATE, context, status=status)


def _list_url(workspace_id) -> str:
    return reverse("webhooks:list", args=[workspace_id])


#: Where a new webhook's id waits, in the operator's session, for the one page that shows its secret.
JUST_ADDED = "webhooks.just_added"


@workspace_admin_required
@require_GET
def webhooks(request, workspace_id):
    workspace = managed_workspace(request.user, workspace_id)
    created = None
    added = request.session.pop(JUST_ADDED, None)
    if added is not None:
        created = Webhook.objects.filter(workspace=workspace, pk=added).first()
    return _page(request, workspace, WebhookForm(workspace=workspace), created=created)


@workspace_admin_required
@require_POST
def webhook_new(request, workspace_id):
    """Add a webhook, then show its secret on the next page only: it is never shown again.

    Post, redirect, get: reloading that page must not add a second webhook.
    The session holds the new webhook's id, not its secret, until that page pops it.
    """
    workspace = managed_workspace(request.user, workspace_id)
    form = WebhookForm(request.POST, workspace=workspace)
    if not form.is_valid():
        return _page(request, workspace, form, status=422)
    form.instance.set_signing_secret(signing.new_secret())
    created = form.save()
    request.session[JUST_ADDED] = created.pk
    return redirect(_list_url(workspace_id))


@workspace_admin_required
@require_POST
def webhook_active(request, workspace_id, webhook_id):
    webhook = _webhook(request.user, workspace_id, webhook_id)
    webhook.active = request.POST.get("active") == "true"
    webhook.save(update_fields=["active"])
    return redirect(f"{_list_url(workspace_id)}#webhook-{webhook.pk}")


@workspace_admin_required
@require_POST
def webhook_delete(request, workspace_id, webhook_id):
    """Its delivery log goes with it."""
    _webhook(request.user, workspace_id, webhook_id).delete()
    return redirect(_list_url(workspace_id))


@workspace_admin_required
@require_POST
def webhook_test(request, workspace_id, webhook_id):
    webhook = _webhook(request.user, workspace_id, webhook_id)
    if webhook.active:  # a switched-off webhook sends nothing, tests included (its button is disabled)
        services.send_test(webhook)
    if request.headers.get("HX-Request"):
        return _log(request, webhook)
    return redirect(f"{_list_url(workspace_id)}#webhook-{webhook.pk}")


@workspace_admin_required
@require_GET
def webhook_log(request, workspace_id, webhook_id):
    """The delivery log alone, which the page re-reads while it is open."""
    return _log(request, _webhook(request.user, workspace_id, webhook_id))


def _log(request, webhook):
    context = {"hook": webhook, "deliveries": services.recent_deliveries(webhook), "workspace": webhook.workspace}
    return render(request, f"{TEMPLATE}#log", context)
