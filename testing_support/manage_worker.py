"""``manage.py`` commands for one test server, with Django started once instead of once per command.

The browser suite makes its operators (``manage.py demo``) and reads or
arranges state (``manage.py shell -c``) hundreds of times; each of those as a
process of its own spent about a second of CPU starting Django for some
milliseconds of work, on the cores the browsers and servers need.
:class:`testing_support.processes.Server` starts this module with the
server's environment and sends it one JSON line per command, the command's
arguments; it answers one JSON line: ``{"ok": true, "stdout": "…"}`` or
``{"ok": false, "stdout": "…", "error": "<traceback>"}``. What the command
prints is its stdout, as ``manage.py`` would have printed it. Its database
connections are closed after each command, as a process's would be.
"""

import io
import json
import os
import sys
import traceback
from contextlib import redirect_stdout


def main() -> None:
    # Replies go to the original stdout alone; anything else written to fd 1
    # (a library printing) goes to stderr instead of into the protocol.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)

    import django
    from django.conf import settings

    # Daphne's app is there for runserver alone; a command never serves, and loading
    # it imports Daphne and Twisted: a third of Django's start-up here, per server.
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "daphne"]
    django.setup()
    from django.core.management import call_command
    from django.db import connections

    for line in sys.stdin:
        output = io.StringIO()
        try:
            with redirect_stdout(output):
                call_command(*json.loads(line), stdout=output)
            reply = {"ok": True, "stdout": output.getvalue()}
        except (Exception, SystemExit):
            reply = {"ok": False, "stdout": output.getvalue(), "error": traceback.format_exc()}
        finally:
            connections.close_all()
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
