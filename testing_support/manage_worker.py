"""``manage.py`` commands for one test server, with Django started once instead of once per command.

The browser suite makes its operators (``manage.py demo``) and reads or
arranges state (``manage.py shell -c``) hundreds of times; each of those as a
process of its own spent about a second of CPU starting Django for some
milliseconds of work, on the cores the browsers and servers need.
:class:`testing_support.processes.ManageWorker` forks one (``forked.py``)
with the server's environment and sends it each command's arguments over a
connection; it answers ``{"ok": True, "stdout": "…"}`` or ``{"ok": False,
"stdout": "…", "error": "<traceback>"}``. What the command prints is its
stdout, as ``manage.py`` would have printed it. Its database connections are
closed after each command, as a process's would be.
"""

import io
import traceback
from contextlib import redirect_stdout


def serve(connection) -> None:
    """Run each command ``connection`` brings until the other end closes it."""
    import django
    from django.conf import settings

    # Daphne's app is there for runserver alone; a command never serves, and loading
    # it imports Daphne and Twisted's reactor, which this process need not.
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "daphne"]
    django.setup()
    from django.core.management import call_command
    from django.db import connections

    while True:
        try:
            args = connection.recv()
        except EOFError:
            return
        output = io.StringIO()
        try:
            with redirect_stdout(output):
                call_command(*args, stdout=output)
            reply = {"ok": True, "stdout": output.getvalue()}
        except (Exception, SystemExit):
            reply = {"ok": False, "stdout": output.getvalue(), "error": traceback.format_exc()}
        finally:
            connections.close_all()
        connection.send(reply)
