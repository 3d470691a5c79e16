"""An agent lives no longer than the task it works for.

Deleting a task (or its board, or its workspace) deletes its sessions and
their executions by cascade; each live execution's agentctl is then shut down,
once the deletion is committed, from whichever web process deleted it. An
execution still starting has no address yet: the runner stops it itself when
it finds its rows gone (``Runner.start``).
"""

import asyncio
import logging

from django.db import transaction
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from .models import AgentExecution
from .routing import Endpoint
from .runner import NotServing, Runner, runner

logger = logging.getLogger(__name__)


@receiver(pre_delete, sender=AgentExecution, dispatch_uid="kandev-stop-deleted-executions")
def stop_deleted_execution(sender, instance: AgentExecution, **kwargs) -> None:
    if instance.ended_at is not None or not instance.url:
        return
    # Over SSH, the way there: once the row is gone nobody could look it up.
    via = instance.executor.address if instance.executor is not None else None
    endpoint = Endpoint(instance.pk, instance.url, instance.token, via=via)
    transaction.on_commit(lambda: shut_down(endpoint))


def shut_down(endpoint: Endpoint) -> None:
    """Ask the execution's agentctl to shut down, without waiting for it."""
    try:
        runner.submit(runner.shutdown(endpoint))
    except NotServing:
        # A management command or the shell: no server loop, so one of our own
        # carries the request (agentctl accepts it from any client).
        logger.info("stopping the agent of the deleted execution %s from outside the server", endpoint.execution_id)
        try:
            asyncio.run(Runner().shutdown(endpoint))
        except RuntimeError:
            # Inside some other event loop (an async test, say): nowhere to run it.
            logger.warning("could not stop the agent of the deleted execution %s", endpoint.execution_id)
