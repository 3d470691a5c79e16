"""Register an executor host, and optionally move agent profiles onto it.

For deployers who script their set-up. An SSH host (the default kind) needs
``--ssh user@host[:port]`` and its host key (``--host-key``, a known_hosts line
such as ``ssh-keyscan`` prints, checked before every login); the login's private
key is read from ``--private-key-file`` and stored sealed, or left to
``KANDEV_SSH_KEY_FILE``. The retired kandev-executor service is registered by
its URL, with the token from ``KANDEV_EXECUTOR_TOKEN`` (never argv, where any
local user could read it), and only with KANDEV_ALLOW_EXECUTOR_SERVICE.
"""

import os
import re
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from kandev_web.executor.ssh import SshError, trusted_host_key
from kandev_web.sessions.models import AgentProfile, Executor

TOKEN_VAR = "KANDEV_EXECUTOR_TOKEN"
_SSH_TARGET = re.compile(r"^(?P<user>[^@\s]+)@(?P<host>\[[^\]]+\]|[^:\s]+)(?::(?P<port>\d{1,5}))?$")


class Command(BaseCommand):
    help = "Create or update an executor host: over SSH (--ssh), or a kandev-executor URL (retired)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "url", nargs="?", help="kandev-executor only (retired): e.g. ws://gpu-1:7310/executor/stream"
        )
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
        parser.add_argument("--workspace", help="Assign only the profiles of this workspace (by name).")

    @transaction.atomic
    def handle(self, *args, name, url, ssh, assign, workspace, **options):
        if bool(url) == bool(ssh):
            raise CommandError("Give either --ssh USER@HOST[:PORT] or, for a kandev-executor service, its URL.")
        fields = self._ssh_fields(ssh, options) if ssh else self._service_fields(url)
        executor = Executor.objects.filter(name=name).first() or Executor(name=name)
        created = executor.pk is None
        for field, value in fields.items():
            setattr(executor, field, value)
        try:
            executor.full_clean()
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        executor.save()
        profiles = AgentProfile.objects.filter(name__in=assign)
        if workspace:
            profiles = profiles.filter(workspace__name=workspace)
        assigned = profiles.update(executor=executor)
        if assign and not assigned:
            raise CommandError(f"No agent profile is named {', '.join(assign)}.")
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
            "url": "",
            "token": "",
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

    def _service_fields(self, url: str) -> dict:
        if not settings.KANDEV_ALLOW_EXECUTOR_SERVICE:
            raise CommandError(
                "kandev-executor is retired: it runs whatever a holder of its token asks and opens agentctl ports "
                "on the network. Use --ssh, or set KANDEV_ALLOW_EXECUTOR_SERVICE=true on a closed network."
            )
        token = os.environ.get(TOKEN_VAR)
        if not token:
            raise CommandError(f"{TOKEN_VAR} is not set; it must hold the token kandev-executor was started with.")
        if not url.startswith(("ws://", "wss://")):
            raise CommandError("The URL must start with ws:// or wss://.")
        return {"url": url, "token": token, "host": "", "user": "", "host_key": ""}
