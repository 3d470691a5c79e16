"""Clients for the machines repositories and agents are on: this web machine, or an executor host over SSH.

Built here rather than on the models, so that loading the models imports
neither asyncssh nor the stream client: only what talks to a machine does.
"""

from pathlib import Path

from django.conf import settings

from kandev_web.checkouts import Checkouts, LocalCheckouts
from kandev_web.executor.address import SshAddress
from kandev_web.executor.ssh import SshCheckouts, SshExecutor

from .models import Repository


def executor_client(address: SshAddress) -> SshExecutor:
    """How this process reaches an executor host: over SSH, within the deployment's connect timeout."""
    return SshExecutor(address, connect_timeout=settings.KANDEV_SSH_CONNECT_SECONDS)


def checkouts(repository: Repository) -> Checkouts:
    """Where ``repository``'s task checkouts are made: on this machine, or by its executor host."""
    executor = repository.executor
    if executor is None:
        return LocalCheckouts(Path(settings.KANDEV_WORKTREE_ROOT))
    return SshCheckouts(executor.address)
