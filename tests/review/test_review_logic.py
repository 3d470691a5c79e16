"""The review's pure parts: numbered diff lines, windows of lines, pages of files, the prompt made of comments."""

import html

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.rendering.diff import file_diff, highlighted, numbered, page_bounds, window
from kandev_web.repositories.review import compose_prompt

lines = st.lists(st.sampled_from(["a", "b", "c", "", "def f():", "    return 1", "x = '<b>'"]), max_size=40)


@given(old=lines, new=lines)
def test_each_line_of_the_new_side_is_numbered_where_it_is_in_the_new_text(old, new):
    rows = numbered(file_diff("f.py", "\n".join(old) if old else None, "\n".join(new))["lines"])
    for row in rows:
        if row["kind"] in ("add", "ctx"):
            assert new[row["new"] - 1] == row["text"]
        if row["kind"] in ("del", "ctx"):
            assert old[row["old"] - 1] == row["text"]
        if row["kind"] == "add":
            assert row["old"] is None
        if row["kind"] == "del":
            assert row["new"] is None


@given(items=st.lists(st.integers(), max_size=60), count=st.integers(1, 25))
def test_windows_one_after_another_give_every_line_once_in_order(items, count):
    shown, start = [], 0
    while start is not None:
        part, start = window(items, start, count)
        assert len(part) <= count
        shown += part
    assert shown == items


@given(total=st.integers(0, 500), per_page=st.integers(1, 50), asked=st.integers(-5, 60))
def test_a_page_asked_for_is_one_that_exists_and_the_pages_hold_every_file(total, per_page, asked):
    page, pages = page_bounds(total, per_page, asked)
    assert 1 <= page <= pages
    assert (pages - 1) * per_page < max(total, 1) <= pages * per_page


comments = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=30).filter(lambda p: "\n" not in p), st.integers(1, 10_000), st.text(max_size=80)
    ),
    min_size=1,
    max_size=8,
)


@given(branch=st.from_regex(r"[a-z/-]{1,20}", fullmatch=True), items=comments)
def test_the_prompt_names_the_branch_then_each_comment_on_an_item_of_its_own(branch, items):
    prompt = compose_prompt(branch, items)
    head, *rest = prompt.split("\n")
    assert head == f"Review comments on {branch}:"
    starts = [line for line in rest if line.startswith("- ")]
    assert len(starts) == len(items)
    for (path, line, _text), start in zip(items, starts, strict=True):
        assert start.startswith(f"- {path}:{line} — ")
    # A comment's own line breaks stay inside its item: every other line is indented under it.
    assert all(line.startswith(("- ", "  ")) or not line for line in rest)


def test_the_prompt_reads_as_the_operator_wrote_it():
    prompt = compose_prompt("kandev/task-7", [("app.py", 5, "Use a set here."), ("README.md", 3, "Typo:\nteh")])
    assert prompt == "Review comments on kandev/task-7:\n- app.py:5 — Use a set here.\n- README.md:3 — Typo:\n  teh"


@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=40),
        max_size=20,
    )
)
def test_highlighted_lines_are_one_per_line_and_hold_no_markup_of_their_own(texts):
    for path in ("x.py", "x.html", "x.unknown"):
        out = highlighted(path, texts)
        assert len(out) == len(texts)
        for text, line in zip(texts, out, strict=True):
            # Whatever Pygments wrapped it in, the text reads back as it was, every < escaped.
            stripped = line
            while "<span" in stripped:
                start = stripped.index("<span")
                stripped = stripped[:start] + stripped[stripped.index(">", start) + 1 :]
            stripped = stripped.replace("</span>", "")
            assert html.unescape(stripped) == text
            assert "<" not in stripped
