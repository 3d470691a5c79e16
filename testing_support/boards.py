"""Boards filled to a size, for the tests that count what a page reads."""

from kandev_web.board.models import Task
from kandev_web.sessions.models import Activity, Message, MessageType, SessionState, TaskSession, Turn


def populate(board, n):
    """``n`` tasks spread over ``board``'s steps, each with a running session.

    Every third session is generating and every second waits on a question:
    what the board and the task list read, at any size.
    """
    steps = list(board.steps.all())
    tasks = Task.objects.bulk_create(
        Task(board=board, step=steps[i % len(steps)], title=f"Task {i}", position=i) for i in range(n)
    )
    for i, task in enumerate(tasks):
        session = TaskSession.objects.create(
            task=task, state=SessionState.RUNNING, activity=Activity.GENERATING if i % 3 == 0 else ""
        )
        turn = Turn.objects.create(session=session)
        if i % 2:
            Message.objects.create(
                session=session, turn=turn, type=MessageType.CLARIFICATION_REQUEST, metadata={"status": "pending"}
            )
    return tasks
