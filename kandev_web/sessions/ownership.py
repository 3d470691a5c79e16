"""Which web process owns an execution's agent stream: claiming it, the heartbeat, and orphans.

The owner applies everything agentctl reports (``events``), so one process
owns a stream at a time. Each owner writes a heartbeat on its executions; a
process claims the live executions whose owner is gone (an orphan), with a
compare-and-set, so of several processes claiming at once one wins.

An owner on another machine is gone when its heartbeat is stale: nothing
else can be known of it from here. An owner on this machine is gone the
moment its process is: a web server restarted after a crash takes its
agents over at once, with no window in which an answer reaches an agent
and nobody hears the agent's reply.
"""

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import psutil
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from kandev_web.executor.address import SshAddress

from .models import AgentExecution


def _started(process: psutil.Process) -> str:
    return f"{process.create_time():.2f}"


def process_id() -> str:
    """This process, as an owner: ``host:pid:started:nonce``, unique across hosts and restarts.

    The start time tells the process from a later one given the same pid (in
    a container, the server is the same pid after every restart).
    """
    return f"{socket.gethostname()}:{os.getpid()}:{_started(psutil.Process())}:{uuid.uuid4().hex[:8]}"


def owner_gone(owner: str) -> bool:
    """Whether ``owner`` is a process of this machine that no longer runs.

    False for an owner on another machine (only its heartbeat can tell), and
    for one written without its start time, whose pid may have been reused.
    """
    host, _, rest = owner.partition(":")
    pid, _, rest = rest.partition(":")
    started, _, _ = rest.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        process = psutil.Process(int(pid))
        return bool(started) and _started(process) != started
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


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


def stream_held(execution: AgentExecution) -> bool:
    """Whether a live process holds the execution's stream now, applying what the agent says.

    What the owner last recorded is not enough: a process killed outright
    records nothing, and its pages would call the stream up until another
    process takes the agent over.
    """
    stale = timezone.now() - timedelta(seconds=3 * settings.KANDEV_OWNER_HEARTBEAT_SECONDS)
    beating = execution.owner_heartbeat_at is not None and execution.owner_heartbeat_at >= stale
    return execution.stream_connected and beating and not owner_gone(execution.owner)


def lock_applied_seq(execution_id: int) -> int:
    """The last notification counted applied, with the row locked until the caller's transaction ends."""
    return AgentExecution.objects.select_for_update().values_list("applied_seq", flat=True).get(pk=execution_id)


def count_applied(execution_id: int, seq: int, *, unless_through: int | None = None) -> bool:
    """Count agentctl's notifications up to ``seq`` applied, in the caller's transaction; False if ``seq`` was.

    With ``unless_through``, count nothing and return False unless every
    notification from ``unless_through`` to ``seq`` is still to be applied.
    The row stays locked until that transaction ends, so of two processes
    applying the same notification (an owner that stopped beating but still
    runs, and its adopter) one applies it and the other finds it counted.
    """
    below = seq if unless_through is None else unless_through
    return bool(AgentExecution.objects.filter(pk=execution_id, applied_seq__lt=below).update(applied_seq=seq))


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
    #: The process that owned it (``host:pid:…``): whose machine ``pid`` is on.
    previous_owner: str = ""
    #: What of agentctl's stream was applied: the adopter resumes after it.
    applied_seq: int = 0
    #: When its previous owner last said it held the stream.
    heartbeat_at: datetime | None = None

    def unheld_past(self, timeout: timedelta) -> bool:
        """Whether nobody has held it for ``timeout``, after which its agentctl stops itself."""
        return self.heartbeat_at is not None and timezone.now() - self.heartbeat_at > timeout


def ssh_host_of(execution_id: int) -> SshAddress | None:
    """The SSH executor host an execution's agentctl runs on, which every process reaches it through."""
    execution = AgentExecution.objects.select_related("executor").filter(pk=execution_id).first()
    if execution is None or execution.executor is None:
        return None
    return execution.executor.address


def claim_orphans(owner: str, *, stale_after: float) -> list[Orphan]:
    """Claim live executions whose owner is gone; each is claimed by one process only.

    A claimed stream counts as down until the claimer has connected to it.
    """
    stale = timezone.now() - timedelta(seconds=stale_after)
    claimed = []
    candidates = (
        AgentExecution.objects.filter(ended_at__isnull=True)
        .filter(Q(owner_heartbeat_at__lt=stale) | Q(owner__startswith=f"{socket.gethostname()}:"))
        .exclude(url="")
        .exclude(owner=owner)
        .select_related("executor")
    )
    for execution in candidates:
        beating = execution.owner_heartbeat_at is not None and execution.owner_heartbeat_at >= stale
        if beating and not owner_gone(execution.owner):
            continue
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
                    applied_seq=execution.applied_seq,
                    heartbeat_at=execution.owner_heartbeat_at,
                )
            )
    return claimed
