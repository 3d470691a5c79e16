"""Where an executor host is and how to log in there: a value, without the means to connect.

Apart from ``ssh`` so that what only describes a host (the ``Executor``
model, a launch plan) does not import asyncssh and the stream client with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SshAddress:
    """How to reach one executor host over SSH. ``private_key`` is a credential: never log it."""

    host: str
    user: str
    #: The host's public key, as a known_hosts line or ``ssh-keyscan`` output.
    host_key: str
    port: int = 22
    #: The command that runs agentctl there: a path, or a name on that login's PATH.
    agentctl: str = "kandev-agentctl"
    #: Where agents' working directories go when a profile names none; relative to the login directory.
    workdir_root: str = "kandev-workdirs"
    #: Where tasks' worktrees go for repositories on that host; relative to the login directory.
    worktree_root: str = "kandev-worktrees"
    #: An OpenSSH private key (text). Empty: ``key_file`` is used.
    private_key: str = field(default="", repr=False)
    key_file: str = ""

    @property
    def url(self) -> str:
        """Who and where, for sentences and logs (no secret in it)."""
        return f"ssh://{self.user}@{self.host}:{self.port}"

    @property
    def checkout_command(self) -> str:
        """``kandev-checkout`` there: beside ``agentctl`` when that is a path, else on the login's PATH."""
        directory, slash, _ = self.agentctl.rpartition("/")
        return f"{directory}{slash}kandev-checkout"
