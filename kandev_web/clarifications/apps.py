from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ClarificationsConfig(AppConfig):
    name = "kandev_web.clarifications"
    verbose_name = _("Clarifications")

    def ready(self):
        from kandev_web.db import agent_sync_to_async
        from kandev_web.sessions import signals

        from . import actions, elicitations, services, url_mode

        def requested(sender, session_id, execution_id, payload, **kwargs):
            elicitations.record_requested(execution_id, session_id, payload)

        def settled(sender, payload, **kwargs):
            actions.do_settle_elicitation(payload)

        def declined(sender, session_id, payload, **kwargs):
            elicitations.record_declined(session_id, payload)

        def completed(sender, payload, **kwargs):
            url_mode.record_completed(payload)

        async def reconcile(sender, session_id, execution_id, client, **kwargs):
            listed = await client.request("agent.elicitations.list", {})
            await agent_sync_to_async(elicitations.reconcile)(execution_id, session_id, listed.get("pending", []))

        def agent_moved_on(sender, session, **kwargs):
            services.agent_moved_on(session.pk)

        def agent_gone(sender, session, execution_id, agentctl_gone, **kwargs):
            if agentctl_gone:
                # Nobody is left to settle what it held: its questions can never be answered.
                actions.do_settle_gone(execution_id, set(), reason=actions.AGENTCTL_GONE)
            services.agent_moved_on(session.pk)

        for signal, receiver in (
            (signals.elicitation_requested, requested),
            (signals.elicitation_settled, settled),
            (signals.elicitation_declined, declined),
            (signals.elicitation_completed, completed),
            (signals.stream_reconnected, reconcile),
            (signals.turn_ended, agent_moved_on),
            (signals.agent_gone, agent_gone),
        ):
            signal.connect(receiver, weak=False, dispatch_uid=f"clarifications.{receiver.__name__}")
