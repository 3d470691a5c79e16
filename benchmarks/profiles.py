"""The two deployment profiles a benchmark runs on: the embedded default and several machines.

``embedded``: one Daphne process, a SQLite file, Channels' in-memory layer,
agentctl a child of the web process on this machine (README.md#quick-start).

``several-machines``: PostgreSQL with psycopg's pool (``KANDEV_DB_POOL_SIZE``,
default 20), the Redis channel layer, two web processes on the same database
and Redis, and every agent on an executor host reached over SSH
(docs/operating.md#running-on-several-machines and
docs/operating.md#executor-hosts-agents-on-other-machines-over-ssh). Here all
of it runs on this machine's loopback, started privately by ``scripts/bench`` (the same
``scripts/lib.sh`` functions ``scripts/test`` uses): a real PostgreSQL, Redis
and sshd, so each hop a deployment adds (a database round trip per statement,
a Redis publish per live event, an SSH channel per agentctl connection) is
really taken, without a network's own latency.
"""

from __future__ import annotations

import argparse
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from kandev_web.executor.address import SshAddress
from testing_support.executor import SSH_TEST_VARS, ssh_test_host

EMBEDDED = "embedded"
SEVERAL_MACHINES = "several-machines"
PROFILES = (EMBEDDED, SEVERAL_MACHINES)

#: What ``scripts/lib.sh``'s ``start_private_services`` exports.
SERVICE_VARS = ("KANDEV_TEST_POSTGRES_URL", "KANDEV_TEST_REDIS_URL", *SSH_TEST_VARS)


def add_profile_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=EMBEDDED,
        help=(
            "embedded (default: one web process, SQLite, in-memory layer, local agentctl) or several-machines "
            "(PostgreSQL with the pool, Redis, two web processes, the agent on an SSH executor; "
            "run it with scripts/bench, which starts those services)"
        ),
    )


@dataclass(frozen=True)
class Services:
    """Where the several-machines profile's PostgreSQL, Redis and SSH executor host are."""

    postgres_url: str
    redis_url: str
    ssh: SshAddress

    @classmethod
    def from_environ(cls, benchmark: str) -> Services:
        missing = [name for name in SERVICE_VARS if not os.environ.get(name)]
        if missing:
            raise SystemExit(
                f"{', '.join(missing)} not set: run scripts/bench {benchmark} --profile {SEVERAL_MACHINES}, "
                "which starts PostgreSQL, Redis and an sshd for it"
            )
        return cls(os.environ["KANDEV_TEST_POSTGRES_URL"], os.environ["KANDEV_TEST_REDIS_URL"], ssh_test_host())


@contextmanager
def fresh_database(base_url: str, prefix: str = "kandev_bench") -> Iterator[str]:
    """A database of its own on that PostgreSQL for as long as the block lasts, then dropped."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(base_url)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(base_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def web_environ(services: Services, database_url: str) -> dict[str, str]:
    """What a kandev-web process of this profile gets on top of the benchmark's server environment.

    A channel prefix of its own keeps a run's events apart from anything
    else on that Redis; both web processes of one run share it. Both run on
    this one machine, so agentctl on loopback is right (``kandev.E002``).
    """
    return {
        "DATABASE_URL": database_url,
        "REDIS_URL": services.redis_url,
        "KANDEV_CHANNEL_PREFIX": f"bench-{uuid.uuid4().hex[:8]}",
        "KANDEV_SILENCED_CHECKS": "kandev.E002",
    }
