"""What the board's live patches are made of.

A board view's HTMX response and the board consumer's frames carry the same
fragments, so both import them from here and neither imports the other.
"""

from django.http import QueryDict
from django.template.loader import render_to_string

from kandev_web.board.models import Board

from .filters import BoardFilter
from .queries import NO_FILTER, board_columns, changed_cards, parse_shown_through


def render_changes(board: Board, *, step_ids, task_ids, request=None, shown: BoardFilter = NO_FILTER) -> str:
    """The live patch after ``task_ids`` changed: their cards, and the counts of ``step_ids``.

    A page puts each card in its place by its sort key (static/js/live.js), so the same
    patch is right for every open board whatever it shows, and applying it
    twice (the actor's response and its socket) changes nothing. A filtered
    board (``shown``) gets the counts of what matches, and a changed card that
    no longer matches as gone.
    """
    columns, gone = changed_cards(board, step_ids=step_ids, task_ids=task_ids, shown=shown)
    return render_to_string(
        "board/board.html#changes-oob",
        {"board": board, "columns": columns, "gone": gone, "shown": shown},
        request=request,
    )


def render_catch_up(board: Board, page_state: QueryDict) -> str:
    """Every column as it is now, out of band: all a page may have missed while its socket was down.

    ``page_state`` is what the page said on connecting (its socket URL's query
    string): ``through`` is how far "Show more" had taken each column, so the
    page keeps showing as much as it did. Whole columns are replaced rather
    than patched card by card because the page cannot say which of its cards
    were moved away or deleted meanwhile. The page's search and filter are
    there too, and the columns are of what matches them.
    """
    through = parse_shown_through(page_state.getlist("through"))
    shown = BoardFilter.from_query(page_state)
    context = {"board": board, "columns": board_columns(board, through=through, shown=shown), "shown": shown}
    context["catch_up"] = True
    return render_to_string("board/board.html#kanban", context)
