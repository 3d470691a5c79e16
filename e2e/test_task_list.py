"""The task list beside a task page, on a board with more tasks than a page shows."""

import json

from playwright.sync_api import expect

from testing_support.browser import card_titled, open_board, watched_page


def open_task_page(browser, server, username, task_id):
    return watched_page(browser, server, username, f"/tasks/{task_id}/", live="task-live")


def group(page, step_id):
    return page.get_by_test_id(f"task-list-group-{step_id}")


def rows(page, step_id):
    return group(page, step_id).get_by_test_id("task-row-link")


def count(page, step_id):
    return group(page, step_id).get_by_test_id("task-list-group-head")


def show_more(page, step_id):
    return group(page, step_id).get_by_test_id("task-list-show-more")


def test_a_long_step_shows_fifty_rows_and_show_more_brings_the_rest_while_it_changes(browser, server):
    ids = server.create_operator("frank", workspace="Long list")
    backlog, in_progress = ids["step_ids"][0], ids["step_ids"][1]
    created = server.manage(
        "shell",
        "-c",
        (
            f"import json; from kandev_web.board.models import Step, Task; step = Step.objects.get(pk={backlog}); "
            "Task.objects.bulk_create(Task(board_id=step.board_id, step=step, title=f'Bulk {i:02d}', position=i) "
            "for i in range(55)); "
            "print(json.dumps(list(step.tasks.order_by('position').values_list('pk', flat=True))))"
        ),
    )
    task_ids = json.loads(created.strip().splitlines()[-1])
    everything = [f"Bulk {i:02d}" for i in range(55)]

    # Early reads a task on the first page; late one past it, which its list shows all the same.
    early = open_task_page(browser, server, "frank", task_ids[0])
    late = open_task_page(browser, server, "frank", task_ids[53])
    expect(rows(early, backlog)).to_have_text(everything[:50])
    expect(rows(late, backlog)).to_have_text([*everything[:50], "Bulk 53"])
    for page, own in ((early, task_ids[0]), (late, task_ids[53])):
        expect(count(page, backlog)).to_have_attribute("data-count", "55")
        expect(show_more(page, backlog)).to_be_visible()
        current = page.locator("[data-testid^=task-row-][data-current=true]")
        expect(current).to_have_count(1)
        expect(current).to_have_attribute("data-task-id", str(own))
        expect(current.get_by_test_id("task-row-link")).to_have_attribute("aria-current", "page")
    expect(early.get_by_test_id(f"task-row-{task_ids[0]}")).to_have_attribute("data-beyond", "false")
    late_row = late.get_by_test_id(f"task-row-{task_ids[53]}")
    expect(late_row).to_have_attribute("data-beyond", "true")

    show_more(early, backlog).click()
    expect(rows(early, backlog)).to_have_text(everything)
    expect(show_more(early, backlog)).to_have_count(0)

    # From the board: a rename shows in place on both pages.
    board = open_board(browser, server, ids, "frank")
    card_titled(board, "Bulk 10").get_by_test_id("task-edit").click()
    board.get_by_test_id("task-edit-title").fill("Renamed live")
    board.get_by_test_id("task-edit-save").click()
    renamed = [*everything[:10], "Renamed live", *everything[11:]]
    expect(rows(early, backlog)).to_have_text(renamed)
    expect(rows(late, backlog)).to_have_text([*renamed[:50], "Bulk 53"])

    # Moved on: the row leaves the Backlog for In Progress on both pages, with both counts.
    card_titled(board, "Bulk 01").get_by_test_id("task-move-right").click()
    for page in (early, late):
        expect(rows(page, in_progress)).to_have_text(["Bulk 01"])
        expect(count(page, in_progress)).to_have_attribute("data-count", "1")
        expect(count(page, backlog)).to_have_attribute("data-count", "54")
    expect(rows(early, backlog)).to_have_text([renamed[0], *renamed[2:]])
    expect(rows(late, backlog)).to_have_text([renamed[0], *renamed[2:50], "Bulk 53"])

    # A new task goes to the end of the Backlog: Early, who shows all of it, sees it there;
    # Late's list stops at "Bulk 49" (and its own task) until Show more.
    board.get_by_test_id("task-form-title").fill("Fresh one")
    board.get_by_test_id("task-create-submit").click()
    expect(rows(early, backlog)).to_have_text([renamed[0], *renamed[2:], "Fresh one"])
    expect(count(late, backlog)).to_have_attribute("data-count", "55")
    expect(rows(late, backlog)).to_have_text([renamed[0], *renamed[2:50], "Bulk 53"])

    # Late's own task, past its page, changes: its row is patched and stays shown and marked.
    board.get_by_test_id("kanban-column-show-more").click()
    card_titled(board, "Bulk 53").get_by_test_id("task-edit").click()
    board.get_by_test_id("task-edit-title").fill("Watched late")
    board.get_by_test_id("task-edit-save").click()
    expect(rows(late, backlog)).to_have_text([renamed[0], *renamed[2:50], "Watched late"])
    expect(late_row).to_have_attribute("data-current", "true")
    expect(late_row).to_have_attribute("data-beyond", "true")
    final = [renamed[0], *renamed[2:53], "Watched late", *renamed[54:], "Fresh one"]
    expect(rows(early, backlog)).to_have_text(final)

    # Show more brings the rest, Late's own task in its place among them.
    show_more(late, backlog).click()
    expect(rows(late, backlog)).to_have_text(final)
    expect(late_row).to_have_attribute("data-beyond", "false")
    expect(late_row).to_have_attribute("data-current", "true")
    expect(show_more(late, backlog)).to_have_count(0)
    # A patch for a row a page does not show is dropped quietly, not an htmx "no target" error.
    for page in (early, late, board):
        assert page.evaluate("window.htmxErrors") == 0
