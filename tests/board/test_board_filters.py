"""Searching and filtering a board: read from its URL, applied in the database, kept by its live patches."""

import re

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_web.agents.models import AgentProfile
from kandev_web.board import services
from kandev_web.board.models import Board, Task, TaskState
from kandev_web.pages.board.filters import MAX_SEARCH_CHARS, STATES, BoardFilter
from kandev_web.pages.board.queries import board_columns, changed_cards, column_page
from kandev_web.repositories.models import Repository, Worktree
from kandev_web.sessions.models import Activity, Message, MessageType, SessionState, TaskSession, Turn
from kandev_web.sessions.tasks import create_task
from testing_support.boards import populate

HTMX = {"HTTP_HX_REQUEST": "true"}


def query(pairs) -> QueryDict:
    data = QueryDict(mutable=True)
    for key, value in pairs:
        data.appendlist(key, value)
    return data


def shown_ids(board, shown) -> list[int]:
    return sorted(card.task.pk for column in board_columns(board, shown=shown) for card in column.cards)


# Reading a filter from a URL ---------------------------------------------------------------------


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q", "state", "profile", "repository", "other"]),
            st.one_of(st.text(), st.sampled_from([*STATES, "3", "-1", "007", str(2**63), " 12 "])),
        )
    )
)
def test_any_query_string_reads_as_a_filter_that_its_own_url_reads_back_the_same(pairs):
    shown = BoardFilter.from_query(query(pairs))
    assert BoardFilter.from_query(QueryDict(shown.query_string())) == shown
    assert len(shown.text) <= MAX_SEARCH_CHARS
    assert shown.states <= set(STATES)
    assert all(0 < pk < 2**63 for pk in shown.profiles | shown.repositories)


def test_what_is_not_a_state_or_an_id_is_left_out_and_the_search_is_trimmed():
    shown = BoardFilter.from_query(
        QueryDict("q=%20%20fix%20%0A%20login%20&state=waiting&state=asleep&profile=x&profile=4&repository=-2")
    )
    assert shown == BoardFilter(text="fix login", states=frozenset({"waiting"}), profiles=frozenset({4}))
    assert not BoardFilter.from_query(QueryDict("state=asleep&profile=&q=%20"))


def test_a_chip_toggles_its_own_value_and_keeps_the_rest():
    shown = BoardFilter(text="login", states=frozenset({"running"}))
    assert shown.toggled("state", "waiting") == "q=login&state=waiting&state=running"
    assert shown.toggled("state", "running") == "q=login"
    assert shown.toggled("profile", 7) == "q=login&state=running&profile=7"


# What a filter matches -----------------------------------------------------------------------------


def test_the_search_finds_titles_descriptions_and_branches_whatever_the_case(board, workspace, make_task):
    by_title = make_task("Fix the LOGIN page")
    by_description = make_task("Tidy up", description="the login form jumps")
    by_branch = make_task("Something else")
    repository = Repository.objects.create(workspace=workspace, name="web", path="/srv/web")
    Worktree.objects.create(task=by_branch, repository=repository, branch="kandev/login-redirect")
    make_task("Unrelated")
    assert shown_ids(board, BoardFilter(text="login")) == sorted([by_title.pk, by_description.pk, by_branch.pk])
    assert shown_ids(board, BoardFilter(text="redirect")) == [by_branch.pk]


def test_profiles_and_repositories_narrow_to_the_tasks_that_used_them(board, workspace, make_task):
    claude = AgentProfile.objects.create(workspace=workspace, name="Claude", agent_id="claude-acp", command=["c"])
    codex = AgentProfile.objects.create(workspace=workspace, name="Codex", agent_id="codex-acp", command=["x"])
    web = Repository.objects.create(workspace=workspace, name="web", path="/srv/web")
    api = Repository.objects.create(workspace=workspace, name="api", path="/srv/api")
    first, second, third = make_task("One"), make_task("Two"), make_task("Three")
    TaskSession.objects.create(task=first, agent_profile=claude)
    TaskSession.objects.create(task=first, agent_profile=codex)
    TaskSession.objects.create(task=second, agent_profile=codex)
    Worktree.objects.create(task=first, repository=web, branch="a")
    Worktree.objects.create(task=third, repository=api, branch="b")
    assert shown_ids(board, BoardFilter(profiles=frozenset({claude.pk}))) == [first.pk]
    assert shown_ids(board, BoardFilter(profiles=frozenset({claude.pk, codex.pk}))) == sorted([first.pk, second.pk])
    assert shown_ids(board, BoardFilter(repositories=frozenset({api.pk}))) == [third.pk]
    both = BoardFilter(profiles=frozenset({codex.pk}), repositories=frozenset({web.pk}))
    assert shown_ids(board, both) == [first.pk]


#: The state chip each card icon belongs to ("" for none: not started).
CHIP_OF_ICON = {
    "task-state-pending-permission": "waiting",
    "task-state-waiting-for-input": "waiting",
    "task-state-running": "running",
    "task-state-background-running": "running",
    "task-state-interrupted": "failed",
    "task-state-workflow-complete": "done",
    "task-state-turn-finished": "done",
    "task-state-backlog": "",
}

a_task = st.tuples(
    st.sampled_from(TaskState.values),
    st.sampled_from([None, *SessionState.values]),
    st.sampled_from(Activity.values),
    st.sampled_from([None, "question", "permission", "answered permission"]),
    st.booleans(),  # on the board's last step
)


def make_card(board, steps, index, task_state, session_state, activity, pending, last_step):
    step = steps[-1] if last_step else steps[0]
    task = Task.objects.create(board=board, step=step, title=f"T{index}", state=task_state, position=index)
    if session_state is None:
        return task
    session = TaskSession.objects.create(task=task, state=session_state, activity=activity)
    turn = Turn.objects.create(session=session)
    if pending == "question":
        Message.objects.create(session=session, turn=turn, type=MessageType.CLARIFICATION_REQUEST, metadata={})
    elif pending:
        status = "pending" if pending == "permission" else "approved"
        Message.objects.create(
            session=session, turn=turn, type=MessageType.PERMISSION_REQUEST, metadata={"status": status}
        )
    return task


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(a_task, min_size=1, max_size=8))
def test_each_state_chip_shows_exactly_the_cards_whose_icon_it_names(workspace, tasks):
    board = Board.objects.create(workspace=workspace, name="Chips")
    board.add_default_steps()
    steps = list(board.steps.order_by("position"))
    for index, spec in enumerate(tasks):
        make_card(board, steps, index, *spec)
    icons = {card.task.pk: card.icon.testid for column in board_columns(board) for card in column.cards}
    for chip in STATES:
        expected = sorted(pk for pk, icon in icons.items() if CHIP_OF_ICON[icon] == chip)
        assert shown_ids(board, BoardFilter(states=frozenset({chip}))) == expected, chip
    two = sorted(pk for pk, icon in icons.items() if CHIP_OF_ICON[icon] in ("waiting", "done"))
    assert shown_ids(board, BoardFilter(states=frozenset({"waiting", "done"}))) == two


# The board's cost stays constant ----------------------------------------------------------------------

EVERYTHING = BoardFilter(
    text="Task", states=frozenset({"waiting", "running"}), profiles=frozenset({1}), repositories=frozenset({1})
)


def test_a_filtered_board_and_its_live_patch_read_the_same_number_of_queries_for_any_size(board, workspace):
    large = Board.objects.create(workspace=workspace, name="Large")
    large.add_default_steps()
    reads, patches = [], []
    for each, n in ((board, 4), (large, 80)):
        tasks = populate(each, n)
        shown = BoardFilter(text="Task", states=frozenset({"waiting", "running"}))
        icons = [card.icon.testid for column in board_columns(each) for card in column.cards]
        with CaptureQueriesContext(connection) as captured:
            columns = board_columns(each, shown=shown)
        reads.append(len(captured))
        assert sum(column.count for column in columns) == sum(CHIP_OF_ICON[icon] in shown.states for icon in icons)
        with CaptureQueriesContext(connection) as captured:
            board_columns(each, shown=EVERYTHING)
        reads.append(len(captured))
        with CaptureQueriesContext(connection) as captured:
            changed_cards(each, step_ids=[tasks[1].step_id], task_ids=[tasks[1].pk], shown=EVERYTHING)
        patches.append(len(captured))
    assert reads[0] == reads[2]  # the states and the search, small board and large
    assert reads[1] == reads[3]  # every filter at once
    assert patches[0] == patches[1]


def test_counts_and_show_more_are_of_the_matching_tasks(board, make_task, monkeypatch):
    from kandev_web.pages.board import queries

    monkeypatch.setattr(queries, "CARDS_PER_PAGE", 2)
    step = board.steps.first()
    matching = [make_task(f"login {i}", step=step) for i in range(5)]
    for i in range(5):
        make_task(f"other {i}", step=step)
    shown = BoardFilter(text="login")
    column = next(column for column in board_columns(board, shown=shown) if column.step == step)
    assert (column.count, column.more) == (5, True)
    assert [card.task.pk for card in column.cards] == [task.pk for task in matching[:2]]
    after = (matching[1].position, matching[1].pk)
    following = column_page(board, step.pk, after, shown)
    assert [card.task.pk for card in following.cards] == [task.pk for task in matching[2:4]]
    assert (following.count, following.more) == (5, True)


# The page ---------------------------------------------------------------------------------------------


def card_ids(html: str) -> list[int]:
    return sorted(int(pk) for pk in re.findall(r'<li id="task-card-(\d+)"', html))


def test_the_board_page_shows_what_its_url_asks_for_and_carries_it_to_its_socket_and_chips(
    operator_client, board, make_task
):
    wanted, _other = make_task("Fix login"), make_task("Write docs")
    page = operator_client.get(f"/boards/{board.pk}/?q=login&state=running").content.decode()
    assert card_ids(page) == []  # "Fix login" has not started: no state chip matches it
    page = operator_client.get(f"/boards/{board.pk}/?q=login").content.decode()
    assert card_ids(page) == [wanted.pk]
    assert f'ws-connect="/ws/boards/{board.pk}/?q=login"' in page
    assert 'value="login"' in page
    waiting_chip = re.search(r'<a href="\?([^"]*)"[^>]*data-testid="board-filter-state" data-value="waiting"', page)
    assert waiting_chip.group(1) == "q=login&amp;state=waiting"
    assert 'data-testid="board-filter-clear"' in page
    plain = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert f'ws-connect="/ws/boards/{board.pk}/"' in plain
    assert 'data-testid="board-filter-clear"' not in plain


def test_a_change_made_from_a_filtered_board_takes_away_the_card_that_stops_matching(operator_client, make_task):
    task = make_task("Fix login")
    board_url = f"http://testserver/boards/{task.board_id}/?q=login"
    response = operator_client.post(
        f"/tasks/{task.pk}/edit/", {"title": "Fix signup", "description": ""}, HTTP_HX_CURRENT_URL=board_url, **HTMX
    )
    assert f'data-live-remove="task-card-{task.pk}"' in response.content.decode()
    again = {"title": "Fix login again", "description": ""}
    response = operator_client.post(f"/tasks/{task.pk}/edit/", again, HTTP_HX_CURRENT_URL=board_url, **HTMX)
    assert f'<li id="task-card-{task.pk}"' in response.content.decode()


# The board's socket -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_filtered_boards_socket_brings_cards_that_start_matching_and_takes_those_that_stop():
    from tests.board.test_consumers import ORIGIN, connect, session_cookie, setup_board

    board, member, _ = await setup_board()
    cookie = await database_sync_to_async(session_cookie)(member)
    socket, connected, _ = await connect(f"/ws/boards/{board.pk}/?q=login", ORIGIN, cookie)
    assert connected
    backlog = await database_sync_to_async(lambda: board.steps.first())()
    task = await database_sync_to_async(create_task)(board, title="Add login", description="", step=backlog)
    frame = await socket.receive_from(timeout=20)
    assert f'<li id="task-card-{task.pk}"' in frame
    assert re.search(rf'id="kanban-column-head-{backlog.pk}"[^>]*data-count="1"', frame)
    other = await database_sync_to_async(create_task)(board, title="Write docs", description="", step=backlog)
    frame = await socket.receive_from(timeout=20)
    assert f'<li id="task-card-{other.pk}"' not in frame
    assert re.search(rf'id="kanban-column-head-{backlog.pk}"[^>]*data-count="1"', frame)
    await database_sync_to_async(services.update_task)(task, title="Add signup", description="")
    frame = await socket.receive_from(timeout=20)
    assert f'data-live-remove="task-card-{task.pk}"' in frame
    assert re.search(rf'id="kanban-column-head-{backlog.pk}"[^>]*data-count="0"', frame)
    await socket.disconnect()
