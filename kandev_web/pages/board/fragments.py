"""What the board's live patches are made of.

A board view's HTMX response and the board consumer's frames carry the same
fragments, so both import them from here and neither imports the other.
"""

from django.http import QueryDict
from django.template.loader import render_to_string

from kandev_web.board.models import Board

from .queries import board_columns, changed_cards, parse_shown_through


def render_changes(board: Board, *, step_ids, task_ids, request=None) -> str:
    """The live patch after ``task_ids`` changed: their cards, and the counts of ``step_ids``.

    A page puts each card in its place by its sort key (static/js/live.js), so the same
    patch is right for every open board whatever it shows, and applying it
    twice (the actor's response and its socket) changes nothing.
    """
    columns, gone = changed_cards(board, step_ids=step_ids, task_ids=task_ids)
    return render_to_string(
        "board/board.html#changes-oob", {"board": board, "columns": columns, "gone": gone}, request=request
    )


def render_catch_up(board: Board, page_state: QueryDict) -> str:
    """Every column as it is now, out of band: all a page may have missed while its socket was down.

    ``page_state`` is what the page said on connecting (its socket URL's query
    string): ``through`` is how far "Show more" had taken each column, so the
    page keeps showing as much as it did. Whole columns are replaced rather
    than patched card by card because the page cannot say which of its cards
    were moved away or deleted meanwhile.
    """
    through = parse_shown_through(page_state.getlist("through"))
    context = {"board": board, "columns": board_columns(board, through=through), "catch_up": True}
    return render_to_string("board/board.html#kanban", context)
