"""Database work from async code, keeping the database connection of the thread it runs in.

Channels' ``database_sync_to_async`` closes the thread's connection before and
after every call unless ``CONN_MAX_AGE`` says otherwise, so each live event
and each agent notification paid for a new connection. Persistent connections
for the whole process are no answer under ASGI: every request runs in a thread
of its own. But the code here, consumers and the agent runner, runs its
database work in asgiref's one thread-sensitive thread, for the life of the
process; one connection kept there is one connection, reused by every call.

The agent runner does the same in a thread of its own (:func:`agent_sync_to_async`).

A connection that broke (the database restarted, say) is closed before the
next call, so it is opened again. Calls made from inside a request (an
``async_to_sync`` in a view) run in that request's thread, whose connection
Django closes when the request ends, as always.
"""

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import SyncToAsync
from django.db import connections

#: The agent runner's own thread. What agents report is applied there, in the
#: order it arrived, beside (not behind) the page sockets' renders in asgiref's
#: thread-sensitive thread: a burst of agent events never delays a page.
AGENT_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kandev-agent-db")


def _drop_broken_connections() -> None:
    """``close_if_unusable_or_obsolete`` without "obsolete": only a broken connection, or one left mid-transaction."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue
        left_open = connection.get_autocommit() != connection.settings_dict["AUTOCOMMIT"]
        if left_open or (connection.errors_occurred and not connection.is_usable()):
            connection.close()


class DatabaseSyncToAsync(SyncToAsync):
    def thread_handler(self, loop, *args, **kwargs):
        _drop_broken_connections()
        return super().thread_handler(loop, *args, **kwargs)


def database_sync_to_async(func):
    """Run ``func`` in the thread-sensitive thread, on a connection kept between calls."""
    return DatabaseSyncToAsync(func, thread_sensitive=True)


def agent_sync_to_async(func):
    """Run ``func`` in the agent runner's thread, on a connection kept between calls."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=AGENT_THREAD)
