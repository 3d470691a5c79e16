"""An edit as the operator reads it: the lines that went and came, with their file's old and new paths."""

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.rendering import diff
from kandev_web.rendering.diff import file_diff


def kinds_and_texts(result):
    return [(line["kind"], line["text"]) for line in result["lines"]]


def test_a_change_is_a_hunk_of_removed_added_and_context_lines():
    result = file_diff("src/app.py", "a\nb\nc\n", "a\nB\nc\nd\n")
    assert (result["old_path"], result["new_path"]) == ("a/src/app.py", "b/src/app.py")
    assert kinds_and_texts(result) == [
        ("hunk", "@@ -1,3 +1,4 @@"),
        ("ctx", "a"),
        ("del", "b"),
        ("add", "B"),
        ("ctx", "c"),
        ("add", "d"),
    ]


def test_a_new_file_comes_from_nowhere():
    result = file_diff("NEW.md", None, "# Title\nbody")
    assert result["old_path"] == "/dev/null"
    assert kinds_and_texts(result) == [("hunk", "@@ -0,0 +1,2 @@"), ("add", "# Title"), ("add", "body")]


def test_no_change_has_no_lines():
    assert file_diff("same.txt", "x\n", "x\n")["lines"] == []


def test_a_huge_edit_is_cut_and_says_how_much(monkeypatch):
    monkeypatch.setattr(diff, "MAX_LINES", 5)
    result = file_diff("big.txt", None, "\n".join(str(n) for n in range(100)))
    assert len(result["lines"]) == 5
    assert result["omitted"] == 101 - 5  # the hunk header and 100 added lines


def test_a_long_line_is_cut():
    result = file_diff("min.js", None, "x" * (diff.MAX_LINE_CHARS * 3))
    assert result["lines"][1] == {"kind": "add", "text": "x" * diff.MAX_LINE_CHARS}


lines = st.lists(st.text(st.characters(blacklist_categories=["Cs", "Zl", "Zp", "Cc"]), max_size=12), max_size=30)


@given(lines, lines)
def test_the_lines_shown_are_the_old_and_the_new_text(old, new):
    """With the whole file as context, context and removed lines are the old text, context and added the new."""
    old_text, new_text = "\n".join(old), "\n".join(new)
    result = file_diff("f", old_text, new_text, context=10**6)
    shown = [line for line in result["lines"] if line["kind"] != "hunk"]
    if old_text.splitlines() == new_text.splitlines():
        assert shown == []
    else:
        assert [line["text"] for line in shown if line["kind"] in ("ctx", "del")] == old_text.splitlines()
        assert [line["text"] for line in shown if line["kind"] in ("ctx", "add")] == new_text.splitlines()
