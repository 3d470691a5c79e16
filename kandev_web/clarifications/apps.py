from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ClarificationsConfig(AppConfig):
    name = "kandev_web.clarifications"
    verbose_name = _("Clarifications")

    def ready(self):
        from kandev_web.db import agent_sync_to_async
        from kandev_web.sessions import runtime, signals

        from . import elicitations, services

        runtime.NOTIFICATION_HANDLERS["elicitation.requested"] = (
            lambda ref, payload: elicitations.record_requested(ref.execution_id, ref.session_id, payload)
        )
        runtime.NOTIFICATION_HANDLERS["elicitation.settled"] = lambda ref, payload: elicitations.record_settled(payload)
        runtime.NOTIFICATION_HANDLERS["elicitation.declined"] = (
            lambda ref, payload: elicitations.record_declined(ref.session_id, payload)
        )

        async def reconcile(ref, client):
            listed = await client.request("agent.elicitations.list", {})
            await agent_sync_to_async(elicitations.reconcile)(
                ref.execution_id, ref.session_id, listed.get("pending", [])
            )

        runtime.RECONNECT_HOOKS.append(reconcile)

        def agent_moved_on(sender, session, **kwargs):
            services.agent_moved_on(session.pk)

        signals.turn_ended.connect(agent_moved_on, weak=False, dispatch_uid="clarifications.turn_ended")
        signals.agent_gone.connect(agent_moved_on, weak=False, dispatch_uid="clarifications.agent_gone")
