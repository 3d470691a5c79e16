"""``kandev-web <command>`` (or ``python -m kandev_web``): Django's management commands, without a checkout.

``kandev-web migrate``, ``kandev-web collectstatic``, ``kandev-web demo``…
exactly what ``manage.py`` runs in a checkout.
"""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev_web.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
