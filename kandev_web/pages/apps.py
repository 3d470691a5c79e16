from django.apps import AppConfig


class PagesConfig(AppConfig):
    """What a browser reaches: the board, the task page, the inbox; the only code that reads across domain apps.

    No models: the domain apps below own the data; this app composes them into
    pages, their live sockets and the inbox's count in the menu.
    """

    name = "kandev_web.pages"
