"""Register an executor host, and optionally move agent profiles onto it.

For deployers who script their set-up. A host needs ``--ssh user@host[:port]``
and its host key (``--host-key``, a known_hosts line such as ``ssh-keyscan``
prints, checked before every login); the login's private key is read from
``--private-key-file`` and stored sealed, or left to ``KANDEV_SSH_KEY_FILE``.
"""

import re
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from kandev_web.agents.models import AgentProfile, Executor
from kandev_web.board.models import Workspace
from kandev_web.executor.ssh import SshError, trusted_host_key

_SSH_TARGET = re.compile(r"^(?P<user>[^@\s]+)@(?P<host>\[[^\]]+\]|[^:\s]+)(?::(?P<port>\d{1,5}))?$")


class Command(BaseCommand):
    help = "Create or update an executor host, reached over SSH."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--ssh", metavar="USER@HOST[:PORT]", help="Log in there over SSH to start agents.")
        parser.add_argument("--host-key", help="The host's public key: a known_hosts line (ssh-keyscan output).")
        parser.add_argument("--private-key-file", type=Path, help="The login's private key; stored sealed.")
        parser.add_argument("--agentctl", help="kandev-agentctl on that host: a path or a name on its PATH.")
        parser.add_argument("--workdir-root", help="Agents' working directories there (default: ~/kandev-workdirs).")
        parser.add_argument("--worktree-root", help="Tasks' worktrees there (default: ~/kandev-worktrees).")
        parser.add_argument(
            "--assign",
            action="append",
            default=[],
            metavar="PROFILE",
            help="Run the agent profiles with this name on it; may be repeated.",
        )
        parser.add_argument(
            "--workspace",
            action="append",
            default=[],
            help="Let this workspace's profiles and repositories run on it (by name; may be repeated); "
            "with --assign, assign only this workspace's profiles.",
        )

    @transaction.atomic
    def handle(self, *args, name, ssh, assign, workspace, **options):
        if not ssh:
            raise CommandError("Give --ssh USER@HOST[:PORT]: executor hosts are reached over SSH.")
        fields = self._ssh_fields(ssh, options)
        executor = Executor.objects.filter(name=name).first() or Executor(name=name)
        created = executor.pk is None
        for field, value in fields.items():
            setattr(executor, field, value)
        try:
            executor.full_clean()
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        executor.save()
        granted = Workspace.objects.filter(name__in=workspace)
        if len(granted) != len(set(workspace)):
            raise CommandError(f"No workspace is named {', '.join(set(workspace) - {w.name for w in granted})}.")
        profiles = AgentProfile.objects.filter(name__in=assign)
        if workspace:
            profiles = profiles.filter(workspace__in=granted)
        assigned = profiles.update(executor=executor)
        if assign and not assigned:
            raise CommandError(f"No agent profile is named {', '.join(assign)}.")
        # A profile put on it may run there: its workspace is granted the host, as any named one is.
        executor.workspaces.add(*granted, *Workspace.objects.filter(agent_profiles__executor=executor))
        self.stdout.write(f"{'Created' if created else 'Updated'} executor {name}; {assigned} profile(s) assigned.")

    def _ssh_fields(self, target: str, options) -> dict:
        match = _SSH_TARGET.match(target)
        if match is None:
            raise CommandError("--ssh takes USER@HOST or USER@HOST:PORT.")
        host_key = (options["host_key"] or "").strip()
        try:
            trusted_host_key(host_key)
        except SshError:
            raise CommandError(
                "Give the host's key with --host-key: a known_hosts line, e.g. the output of "
                f"ssh-keyscan -t ed25519 {match['host']}. Check it out of band: every login is checked against it."
            ) from None
        fields = {
            "host": match["host"].strip("[]"),
            "port": int(match["port"] or 22),
            "user": match["user"],
            "host_key": host_key,
        }
        if options["private_key_file"]:
            try:
                fields["private_key"] = options["private_key_file"].read_text()
            except OSError as error:
                raise CommandError(f"Cannot read {options['private_key_file']}: {error.strerror}") from None
        for option in ("agentctl", "workdir_root", "worktree_root"):
            if options[option]:
                fields[option] = options[option]
        return fields
