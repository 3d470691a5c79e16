"""What agents spend (ACP usage_update): read, kept per session and per day, shown, and warned about over budget."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.board.models import Task
from kandev_web.sessions import events
from kandev_web.sessions.models import UsageDay
from kandev_web.sessions.usage import MAX_COST, MAX_TOKENS, Usage, added_cost, read_usage

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


# Reading a report ------------------------------------------------------------------------------------


@given(st.dictionaries(st.sampled_from(["used", "size", "cost", "sessionUpdate", "other"]), json_values))
def test_any_report_reads_as_usable_numbers_or_as_nothing(update):
    usage = read_usage(update)
    if usage is None:
        return
    assert usage.used is None or 0 <= usage.used <= MAX_TOKENS
    assert usage.size is None or 0 <= usage.size <= MAX_TOKENS
    assert (usage.cost is None) == (usage.currency == "")
    assert usage.cost is None or (0 <= usage.cost < MAX_COST and re.fullmatch("[A-Z]{3}", usage.currency))


def test_a_report_as_the_protocol_gives_it():
    update = {
        "sessionUpdate": "usage_update",
        "used": 53000,
        "size": 200000,
        "cost": {"amount": 0.045, "currency": "usd"},
    }
    assert read_usage(update) == Usage(used=53000, size=200000, cost=Decimal("0.045000"), currency="USD")
    assert read_usage({"used": 10, "size": 100}) == Usage(used=10, size=100)


@pytest.mark.parametrize(
    "cost",
    [
        {"amount": "0.5", "currency": "USD"},
        {"amount": True, "currency": "USD"},
        {"amount": -1, "currency": "USD"},
        {"amount": float("nan"), "currency": "USD"},
        {"amount": 1e12, "currency": "USD"},
        {"amount": 1, "currency": "US"},
        {"amount": 1, "currency": "<b>"},
        {"amount": 1},
        "1 USD",
    ],
)
def test_a_cost_that_is_not_an_amount_in_a_currency_is_left_out(cost):
    assert read_usage({"cost": cost}) is None
    assert read_usage({"used": 5, "cost": cost}) == Usage(used=5)


@given(st.lists(st.decimals(min_value=0, max_value=1000, places=6, allow_nan=False), min_size=1, max_size=20))
def test_what_the_days_add_up_to_is_what_the_agent_reported_since_it_last_began_counting(reports):
    total, before = Decimal(0), None
    for now in reports:
        total += added_cost(before, "USD", now, "USD")
        before = now
    restarts = [0] + [i for i in range(1, len(reports)) if reports[i] < reports[i - 1]]
    assert total == sum(reports[i - 1] for i in restarts[1:]) + reports[-1]


def test_a_report_in_another_currency_counts_whole():
    assert added_cost(Decimal("2"), "USD", Decimal("3"), "EUR") == Decimal("3")


# Recording it -------------------------------------------------------------------------------------------


def report(session, **fields):
    events.record_session_update(session.pk, {"sessionUpdate": "usage_update", **fields})


def test_the_latest_report_is_kept_on_the_session_and_what_it_added_on_its_day(make_task, make_session):
    session = make_session(make_task())
    report(session, used=1000, size=200000, cost={"amount": 0.25, "currency": "USD"})
    report(session, used=4000, size=200000, cost={"amount": 0.75, "currency": "USD"})
    report(session, used=5000)  # a report without a cost keeps the cost
    session.refresh_from_db()
    assert (session.context_used, session.context_size) == (5000, 200000)
    assert (session.cost, session.cost_currency) == (Decimal("0.75"), "USD")
    day = UsageDay.objects.get(session=session)
    assert (day.day, day.currency, day.cost) == (timezone.now().date(), "USD", Decimal("0.75"))


def test_a_report_with_nothing_usable_changes_nothing(make_task, make_session):
    session = make_session(make_task())
    report(session, used=-4, cost={"amount": "lots", "currency": "USD"})
    session.refresh_from_db()
    assert (session.context_used, session.cost) == (None, None)
    assert not UsageDay.objects.exists()


# Showing it ------------------------------------------------------------------------------------------------


def test_the_card_the_task_page_and_the_session_row_show_what_was_spent(
    operator_client, board, make_task, make_session
):
    task = make_task("Costly")
    report(make_session(task), used=36000, size=200000, cost={"amount": 0.75, "currency": "USD"})
    report(make_session(task), cost={"amount": 0.5, "currency": "USD"})
    board_page = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert re.search(
        r'data-testid="task-card-cost" data-over-budget="false" data-context-used="36000">\s*1.25 USD · 36k tokens',
        board_page,
    )
    task_page = operator_client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-testid="task-spent" data-amount="1.25" data-currency="USD"' in task_page
    assert re.search(r'data-context-used="36000"\s+data-context-size="200000" data-cost="0.75"', task_page)
    assert "36k of 200k tokens" in task_page


def test_a_card_shows_the_tokens_of_an_agent_that_reports_no_cost(operator_client, board, make_task, make_session):
    task = make_task("Frugal")
    report(make_session(task), used=18400, size=200000)
    board_page = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert re.search(r'data-context-used="18400">\s*18.4k tokens\s*</p>', board_page)


def test_a_budget_crossed_warns_on_the_task_its_card_and_the_inbox_and_stops_nothing(
    operator_client, board, make_task, make_session
):
    task = make_task("Runaway")
    session = make_session(task)
    page = operator_client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-testid="task-spent" data-amount="" data-currency=""' in page
    response = operator_client.post(f"/tasks/{task.pk}/budget/", {"budget": "0.50"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 204
    task.refresh_from_db()
    assert task.budget == Decimal("0.50")
    report(session, cost={"amount": 0.25, "currency": "USD"})
    assert 'data-testid="task-over-budget"' not in operator_client.get(f"/tasks/{task.pk}/").content.decode()
    report(session, cost={"amount": 0.75, "currency": "USD"})

    task_page = operator_client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-testid="task-over-budget"' in task_page
    assert "spent 0.75 USD of a 0.50 budget" in task_page
    board_page = operator_client.get(f"/boards/{board.pk}/").content.decode()
    assert 'data-testid="task-card-cost" data-over-budget="true"' in board_page
    inbox = operator_client.get("/inbox/").content.decode()
    assert re.search(rf'data-testid="inbox-over-budget-task" data-task-id="{task.pk}"', inbox)
    session.refresh_from_db()
    assert session.state == "RUNNING"  # a warning, never a stop

    operator_client.post(f"/tasks/{task.pk}/budget/", {"budget": ""}, HTTP_HX_REQUEST="true")
    assert Task.objects.get(pk=task.pk).budget is None
    assert 'data-testid="inbox-over-budget-task"' not in operator_client.get("/inbox/").content.decode()


@pytest.mark.parametrize(
    ("budget", "says"),
    [("-1", "below zero"), ("lots", "as an amount"), ("1.234", "to the cent"), ("1e20", "too large")],
)
def test_a_budget_that_is_not_an_amount_is_refused_with_a_sentence(operator_client, make_task, budget, says):
    task = make_task()
    response = operator_client.post(f"/tasks/{task.pk}/budget/", {"budget": budget}, HTTP_HX_REQUEST="true")
    assert says in response.content.decode()
    assert Task.objects.get(pk=task.pk).budget is None


def test_another_workspaces_task_budget_is_404(operator_client, make_operator):
    from kandev_web.board.models import Board, Workspace

    elsewhere = Workspace.objects.create(name="Elsewhere")
    board = Board.objects.create(workspace=elsewhere, name="Theirs")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="Not yours")
    assert operator_client.post(f"/tasks/{task.pk}/budget/", {"budget": "1"}).status_code == 404


def test_the_usage_page_totals_per_board_and_per_day(operator_client, board, make_task, make_session):
    first, second = make_session(make_task("One")), make_session(make_task("Two"))
    report(first, cost={"amount": 0.25, "currency": "USD"})
    report(second, cost={"amount": 1.5, "currency": "USD"})
    yesterday = timezone.now().date() - timedelta(days=1)
    UsageDay.objects.create(session=first, day=yesterday, currency="USD", cost=Decimal("2"))
    page = operator_client.get("/usage/").content.decode()
    assert re.search(
        rf'data-testid="usage-board" data-board-id="{board.pk}" data-currency="USD" data-total="1.75"', page
    )
    today = timezone.now().date().isoformat()
    assert f'data-testid="usage-day" data-day="{today}" data-total="1.75 USD"' in page
    assert f'data-testid="usage-day" data-day="{yesterday.isoformat()}" data-total="2 USD"' in page


def test_the_usage_page_counts_only_the_viewers_boards(operator_client, make_session):
    from kandev_web.board.models import Board, Workspace

    elsewhere = Workspace.objects.create(name="Elsewhere")
    board = Board.objects.create(workspace=elsewhere, name="Theirs")
    board.add_default_steps()
    task = Task.objects.create(board=board, step=board.steps.first(), title="Not yours")
    report(make_session(task), cost={"amount": 9, "currency": "USD"})
    page = operator_client.get("/usage/").content.decode()
    assert 'data-testid="usage-none"' in page
    assert "9.00 USD" not in page


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0"), (950, "950"), (18_400, "18.4k"), (36_000, "36k"), (123_456, "123k"), (1_250_000, "1.2M")],
)
def test_token_counts_are_read_at_a_glance(count, shown):
    from kandev_web.sessions.templatetags.usage import tokens

    assert tokens(count) == shown
