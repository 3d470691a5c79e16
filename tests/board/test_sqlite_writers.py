"""Concurrent writers wait their turn instead of failing, on SQLite (no "database is locked") and PostgreSQL."""

import threading

import pytest
from django.db import connection

from kandev_web.board.models import Task
from kandev_web.sessions import tasks

pytestmark = pytest.mark.postgres


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_never_see_database_is_locked(board):
    backlog = board.steps.first()
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(15):
                task = tasks.create_task(board, title=f"w{n}-{i}", description="", step=backlog)
                tasks.move_task(task, board.steps.last())
        except BaseException as error:  # any failure is what this test looks for
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Task.objects.filter(step=board.steps.last()).count() == 8 * 15
