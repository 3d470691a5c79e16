"""Which web process owns an execution's agent stream: claiming it, the heartbeat, and orphans.

The owner applies everything agentctl reports (``events``), so exactly one
process may own a stream at a time. Each owner writes a heartbeat on its
executions; a process claims the live executions whose owner stopped
beating (an orphan), with a compare-and-set, so of several processes
claiming at once one wins.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from kandev_web.executor.address import SshAddress

from .models import AgentExecution


@transaction.atomic
def record_execution_started(
    execution_id: int, url: str, token: str, pid: int, *, owner: str, launch_id: str = ""
) -> bool:
    """Where the execution's agentctl listens; False when its task was deleted meanwhile."""
    return bool(
        AgentExecution.objects.filter(pk=execution_id).update(
            url=url, token=token, pid=pid, launch_id=launch_id, owner=owner, owner_heartbeat_at=timezone.now()
        )
    )


def heartbeat(owner: str, execution_ids: list[int]) -> None:
    if execution_ids:
        AgentExecution.objects.filter(pk__in=execution_ids, owner=owner).update(owner_heartbeat_at=timezone.now())


@dataclass(frozen=True)
class Orphan:
    execution_id: int
    session_id: int
    url: str
    token: str
    pid: int | None = None
    #: Set when agentctl runs on an executor host: the way there, to reach and follow it.
    executor: SshAddress | None = None
    launch_id: str = ""
    #: The process that owned it (``host:pid:nonce``): whose machine ``pid`` is on.
    previous_owner: str = ""


def ssh_host_of(execution_id: int) -> SshAddress | None:
    """The SSH executor host an execution's agentctl runs on, which every process reaches it through."""
    execution = AgentExecution.objects.select_related("executor").filter(pk=execution_id).first()
    if execution is None or execution.executor is None:
        return None
    return execution.executor.address


def claim_orphans(owner: str, *, stale_after: float) -> list[Orphan]:
    """Claim live executions whose owner stopped beating; each is claimed by one process only."""
    stale = timezone.now() - timedelta(seconds=stale_after)
    claimed = []
    candidates = (
        AgentExecution.objects.filter(ended_at__isnull=True, owner_heartbeat_at__lt=stale)
        .exclude(url="")
        .exclude(owner=owner)
    )
    for execution in candidates:
        # Compare-and-set: of several processes claiming at once, one wins.
        won = AgentExecution.objects.filter(
            pk=execution.pk, owner=execution.owner, owner_heartbeat_at=execution.owner_heartbeat_at
        ).update(owner=owner, owner_heartbeat_at=timezone.now())
        if won:
            claimed.append(
                Orphan(
                    execution.pk,
                    execution.session_id,
                    execution.url,
                    execution.token,
                    pid=execution.pid,
                    executor=execution.executor.address if execution.executor and execution.launch_id else None,
                    launch_id=execution.launch_id,
                    previous_owner=execution.owner,
                )
            )
    return claimed
