"""A task's title and description and an agent's prompt, typed or pasted with a NUL, are kept with U+FFFD.

Django's form fields refuse a NUL ("Null characters are not allowed."), which
the operator cannot see in what they pasted; the prompt form said only
"Choose an agent and write a prompt.". A NUL now reads as a visible U+FFFD
(``kandev_web/forms.py``), on SQLite and on PostgreSQL.
"""

import pytest

from kandev_web.board.models import Task
from kandev_web.sessions.models import AuthorType, Message, MessageType

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def test_a_task_created_and_edited_with_a_nul_is_kept(operator_client, board):
    backlog = board.steps.first()
    response = operator_client.post(
        f"/boards/{board.pk}/tasks/", {"title": "Read a.out\x00", "description": "\x7fELF\x00", "step": backlog.pk}
    )
    assert response.status_code == 200
    task = Task.objects.get()
    assert (task.title, task.description) == ("Read a.out\ufffd", "\x7fELF\ufffd")
    response = operator_client.post(f"/tasks/{task.pk}/edit/", {"title": "Again\x00", "description": ""})
    assert response.status_code == 200
    task.refresh_from_db()
    assert task.title == "Again\ufffd"


def test_a_prompt_with_a_nul_starts_the_agent(operator_client, make_task, make_profile):
    task = make_task("Inspect")
    profile = make_profile()
    response = operator_client.post(f"/tasks/{task.pk}/sessions/", {"profile": profile.pk, "prompt": "cat \x00 please"})
    assert response.status_code == 204
    prompt = Message.objects.get(session__task=task, type=MessageType.MESSAGE, author_type=AuthorType.USER)
    assert prompt.content == "cat \ufffd please"
