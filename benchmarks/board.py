"""The board page with 100, 1,000 and 5,000 tasks: server time and SQL query count.

    .venv/bin/python -m benchmarks.board [--sizes 100,1000,5000] [--repeats 7] [--profile]

In-process, through Django's test client, against a SQLite *file* database
(WAL, as the app configures it) that this script migrates and fills: one
workspace and board per size, tasks over the four default steps, agent
sessions on 40 % of the tasks in every state, their turns and messages, and
pending clarifications and permission requests on some of them, so every
branch of the state icon is exercised.

For each size: the median wall time of ``--repeats`` GETs (after one warm-up
GET, no query capture while timing), and the number of SQL queries of one GET
captured with ``CaptureQueriesContext`` (middleware included: session and
user). The same for the task page (its task list shows a page of rows per
step, and the task itself: a task in the middle of the board, from 1,000
tasks on past its step's first page), for the two live patches one ``board.changed`` of one task
renders (the board's, and the task list's for each open task page), and for
the two "Show more" (the second page of a board column, and of the same step
in the task page's task list). The board's query count
must be the same for every size and at most 12.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/board.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import json
import os
import statistics
import time
from functools import partial
from pathlib import Path

from benchmarks import support

TARGET_QUERIES = 12


def setup_django(database: Path) -> None:
    for key in [k for k in os.environ if k.startswith("KANDEV_FEATURES_")]:
        del os.environ[key]
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "kandev_web.settings",
            "KANDEV_PROFILE": "e2e",
            "DATABASE_URL": f"sqlite:///{database}",
            "ALLOWED_HOSTS": "testserver,127.0.0.1,localhost",
            "LOG_LEVEL": "WARNING",
        }
    )
    os.environ.pop("REDIS_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def populate(size: int, user) -> dict:
    """A workspace and board with ``size`` tasks, sessions, turns, messages and pending questions."""
    from django.utils import timezone

    from kandev_web.agents.models import AgentProfile
    from kandev_web.board.models import Board, Task, TaskState, Workspace
    from kandev_web.clarifications.models import Clarification, Source, Status
    from kandev_web.sessions.models import Activity, Message, MessageType, SessionState, TaskSession, Turn

    workspace = Workspace.objects.create(name=f"Bench {size}")
    workspace.members.add(user)
    board = Board.objects.create(workspace=workspace, name=f"Board of {size}")
    board.add_default_steps()
    steps = list(board.steps.all())
    profile = AgentProfile.objects.create(
        workspace=workspace, name="Mock agent", agent_id="mock-agent", command=["true"]
    )
    task_states = [TaskState.TODO, TaskState.IN_PROGRESS, TaskState.REVIEW, TaskState.COMPLETED, TaskState.FAILED]
    tasks = Task.objects.bulk_create(
        Task(
            board=board,
            step=steps[i % len(steps)],
            title=f"Task {i}: make the thing work at scale",
            description="A description long enough to be truncated on the card. " * 3,
            position=i,
            state=task_states[i % len(task_states)],
        )
        for i in range(size)
    )
    session_states = [
        SessionState.RUNNING,
        SessionState.WAITING_FOR_INPUT,
        SessionState.COMPLETED,
        SessionState.FAILED,
        SessionState.CANCELLED,
    ]
    with_session = [t for i, t in enumerate(tasks) if i % 5 < 2]  # 40 %
    sessions = TaskSession.objects.bulk_create(
        TaskSession(
            task=task,
            agent_profile=profile,
            state=session_states[i % len(session_states)],
            activity=Activity.GENERATING if i % 7 == 0 else Activity.NONE,
        )
        for i, task in enumerate(with_session)
    )
    turns = Turn.objects.bulk_create(Turn(session=s, agent_turn_id=f"turn-{s.pk}") for s in sessions)
    now = timezone.now()
    messages, clarifications = [], []
    pending_clarifications = pending_permissions = 0
    for i, (session, turn) in enumerate(zip(sessions, turns, strict=True)):
        messages.append(Message(session=session, turn=turn, type=MessageType.MESSAGE, author_type="user", content="Go"))
        messages.append(Message(session=session, turn=turn, type=MessageType.MESSAGE, content="Working on it."))
        if i % 10 == 1:  # a pending clarification in the current turn
            pending_id = f"bench-{size}-{session.pk}"
            clarifications.append(
                Clarification(
                    pending_id=pending_id,
                    session=session,
                    turn=turn,
                    source=Source.ELICITATION,
                    questions=[
                        {
                            "id": "question_0",
                            "title": "Colour",
                            "prompt": "Pick",
                            "kind": "single",
                            "options": [{"id": "Red", "label": "Red", "description": ""}],
                        }
                    ],
                )
            )
            messages.append(
                Message(
                    session=session,
                    turn=turn,
                    type=MessageType.CLARIFICATION_REQUEST,
                    content="Pick",
                    requests_input=True,
                    metadata={"pending_id": pending_id, "question_index": 0},
                )
            )
            pending_clarifications += 1
        if i % 20 == 3:  # a pending permission request
            messages.append(
                Message(
                    session=session,
                    turn=turn,
                    type=MessageType.PERMISSION_REQUEST,
                    content="Run tests",
                    requests_input=True,
                    metadata={"pending_id": f"perm-{session.pk}", "status": "pending", "options": []},
                )
            )
            pending_permissions += 1
        if i % 10 == 5:  # an answered one, which must not count
            clarifications.append(
                Clarification(
                    pending_id=f"old-{session.pk}",
                    session=session,
                    turn=turn,
                    source=Source.ELICITATION,
                    questions=[{"id": "q", "title": "", "prompt": "Old", "kind": "text", "options": []}],
                    status=Status.ANSWERED,
                )
            )
            messages.append(
                Message(
                    session=session,
                    turn=turn,
                    type=MessageType.CLARIFICATION_REQUEST,
                    content="Old",
                    metadata={"pending_id": f"old-{session.pk}", "question_index": 0},
                )
            )
    Message.objects.bulk_create(messages)
    Clarification.objects.bulk_create(clarifications)
    Turn.objects.filter(session__in=sessions[::3]).update(completed_at=now)
    return {
        "board": board,
        "task": tasks[len(tasks) // 2],
        "sessions": len(sessions),
        "messages": len(messages),
        "pending_clarifications": pending_clarifications,
        "pending_permissions": pending_permissions,
    }


def measure(call, repeats: int) -> tuple[float, int, int]:
    """(median ms over ``repeats``, query count of one captured call, output size)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    call()  # warm-up: templates compiled, caches filled
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    with CaptureQueriesContext(connection) as captured:
        output = call()
    return statistics.median(times), len(captured.captured_queries), len(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000", help="task counts (default 100,1000,5000)")
    parser.add_argument("--repeats", type=int, default=7, help="timed GETs per page and size (default 7)")
    parser.add_argument("--profile", action="store_true", help="cProfile one board GET at the largest size")
    parser.add_argument("--show-queries", action="store_true", help="print the board GET's SQL at the largest size")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    support.header("board: page time and SQL query count against the number of tasks")
    results = {}
    with support.workdir(keep=args.keep) as directory:
        setup_django(directory / "board.sqlite3")
        from django.contrib.auth import get_user_model
        from django.test import Client

        from kandev_web.pages.board.fragments import render_changes
        from kandev_web.pages.board.queries import CARDS_PER_PAGE
        from kandev_web.pages.task.fragments import render_task_rows

        user = get_user_model().objects.create_user("bench", password=support.PASSWORD)
        client = Client()
        client.force_login(user)
        boards = {}
        for size in sizes:
            start = time.perf_counter()
            boards[size] = populate(size, user)
            info = boards[size]
            print(
                f"   {size} tasks: {info['sessions']} sessions, {info['messages']} messages, "
                f"{info['pending_clarifications']} pending clarifications, {info['pending_permissions']} pending "
                f"permissions (filled in {time.perf_counter() - start:.1f} s)"
            )
        print(f"   database {os.path.getsize(directory / 'board.sqlite3') // 1024} KiB (+ WAL)")

        def get(url):
            def call():
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                return response.content

            return call

        header = (
            f"{'tasks':>6} | {'board GET ms':>12} {'queries':>7} {'KiB':>6} | "
            f"{'task page ms':>12} {'queries':>7} {'KiB':>6} | "
            f"{'board patch ms':>14} {'queries':>7} | {'task row patch ms':>17} {'queries':>7} | "
            f"{'show more ms':>12} {'queries':>7} | {'rows more ms':>12} {'queries':>7}"
        )
        print(header)
        print("-" * len(header))
        for size in sizes:
            board, task = boards[size]["board"], boards[size]["task"]
            first_step = board.steps.first()
            changed = {"step_ids": [task.step_id], "task_ids": [task.pk]}
            row = {
                "board_page": measure(get(f"/boards/{board.pk}/"), args.repeats),
                "task_page": measure(get(f"/tasks/{task.pk}/"), args.repeats),
                "board_patch": measure(partial(render_changes, board, **changed), args.repeats),
                "task_row_patch": measure(partial(render_task_rows, board.pk, task.pk, **changed), args.repeats),
            }
            in_order = first_step.tasks.order_by("position", "pk").values_list("position", "pk")
            if len(in_order) > CARDS_PER_PAGE:  # the column has a "Show more": time its second page
                position, pk = in_order[CARDS_PER_PAGE - 1]
                more = f"/boards/{board.pk}/steps/{first_step.pk}/cards/?after={position},{pk}"
                row["show_more"] = measure(get(more), args.repeats)
                rows_more = f"/tasks/{task.pk}/steps/{first_step.pk}/rows/?after={position},{pk}"
                row["task_list_more"] = measure(get(rows_more), args.repeats)
            results[size] = {key: {"ms": ms, "queries": q, "bytes": b} for key, (ms, q, b) in row.items()}
            b, t, c, tl = (row[key] for key in ("board_page", "task_page", "board_patch", "task_row_patch"))
            more = [row.get(key) for key in ("show_more", "task_list_more")]
            m = " | ".join(f"{x[0]:>12.1f} {x[1]:>7}" if x else f"{'-':>12} {'-':>7}" for x in more)
            print(
                f"{size:>6} | {b[0]:>12.1f} {b[1]:>7} {b[2] // 1024:>6} | {t[0]:>12.1f} {t[1]:>7} {t[2] // 1024:>6} | "
                f"{c[0]:>14.1f} {c[1]:>7} | {tl[0]:>17.1f} {tl[1]:>7} | {m}"
            )
        counts = {results[s]["board_page"]["queries"] for s in sizes}
        constant = len(counts) == 1
        worst = max(counts)
        print(f"board GET query count constant in N: {'YES' if constant else 'NO'} ({sorted(counts)})")
        print(
            f"target board query count <= {TARGET_QUERIES} for any N: "
            f"{'MET' if constant and worst <= TARGET_QUERIES else 'MISSED'} ({worst})"
        )
        for key in ("task_page", "board_patch", "task_row_patch", "show_more", "task_list_more"):
            counts_k = sorted({results[s][key]["queries"] for s in sizes if key in results[s]})
            print(f"{key} query count constant in N: {'YES' if len(counts_k) == 1 else 'NO'} ({counts_k})")
        largest = boards[sizes[-1]]["board"]
        if args.show_queries:
            from django.db import connection
            from django.test.utils import CaptureQueriesContext

            with CaptureQueriesContext(connection) as captured:
                client.get(f"/boards/{largest.pk}/")
            for i, query in enumerate(captured.captured_queries, 1):
                print(f"  [{i}] {query['time']}s {query['sql'][:300]}")
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            client.get(f"/boards/{largest.pk}/")
            profiler.disable()
            print(f"cProfile of one board GET with {sizes[-1]} tasks (top 25 by cumulative time):")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    support.footer()
    if args.json:
        args.json.write_text(json.dumps({"board": results, "constant": constant, "max_queries": worst}, indent=1))
    return 0 if constant and worst <= TARGET_QUERIES else 1


if __name__ == "__main__":
    raise SystemExit(main())
