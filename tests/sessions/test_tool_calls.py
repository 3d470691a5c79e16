"""A tool call's record, from what the agent reports of it: its text, its file edits and its terminals."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.rendering import terminal
from kandev_web.sessions.tool_calls import after_permission, merge_update


def text(value):
    return {"type": "content", "content": {"type": "text", "text": value}}


def apply(*updates):
    record = {}
    for update in updates:
        record = merge_update(record, update)
    return record


def test_fields_and_text_are_kept_as_reported():
    record = apply(
        {"toolCallId": "t1", "title": "Run pytest", "kind": "execute", "status": "pending"},
        {"toolCallId": "t1", "status": "completed", "content": [text("3 passed"), text("in 0.1s")]},
    )
    assert record["title"] == "Run pytest"
    assert record["status"] == "completed"
    assert record["output"] == "3 passed\nin 0.1s"
    assert "diffs" not in record
    assert "terminals" not in record


def test_a_diff_is_kept_as_the_lines_of_the_edit():
    diff = {"type": "diff", "path": "/repo/settings.py", "oldText": "DEBUG = True\n", "newText": "DEBUG = False\n"}
    [kept] = apply({"toolCallId": "e1", "kind": "edit", "content": [diff]})["diffs"]
    assert (kept["path"], kept["old_path"], kept["new_path"]) == (
        "/repo/settings.py",
        "a//repo/settings.py",
        "b//repo/settings.py",
    )
    assert [(line["kind"], line["text"]) for line in kept["lines"]][1:] == [
        ("del", "DEBUG = True"),
        ("add", "DEBUG = False"),
    ]


def test_a_new_files_diff_has_no_old_text():
    [kept] = apply({"content": [{"type": "diff", "path": "n.txt", "oldText": None, "newText": "hi"}]})["diffs"]
    assert kept["old_path"] == "/dev/null"


def test_a_terminal_gets_its_output_and_exit_from_the_bridges_meta():
    record = apply(
        {
            "toolCallId": "b1",
            "kind": "execute",
            "content": [{"type": "terminal", "terminalId": "b1"}],
            "_meta": {"terminal_info": {"terminal_id": "b1"}},
        },
        {"toolCallId": "b1", "_meta": {"terminal_output": {"terminal_id": "b1", "data": "\x1b[32mok\x1b[0m 1\n"}}},
        {"toolCallId": "b1", "_meta": {"terminal_output_delta": {"terminal_id": "b1", "data": "ok 2\n"}}},
        {
            "toolCallId": "b1",
            "status": "completed",
            "_meta": {"terminal_exit": {"terminal_id": "b1", "exit_code": 0, "signal": None}},
        },
    )
    assert record["terminals"] == [
        {"terminal_id": "b1", "output": "ok 1\nok 2\n", "truncated": False, "exited": True, "exit_code": 0}
    ]
    # terminal_output is all of it so far: it replaces what was there.
    replaced = merge_update(record, {"_meta": {"terminal_output": {"terminal_id": "b1", "data": "again\n"}}})
    assert replaced["terminals"][0]["output"] == "again\n"


def test_a_long_terminal_output_keeps_its_end(monkeypatch):
    monkeypatch.setattr(terminal, "MAX_OUTPUT_CHARS", 10)
    record = apply({"_meta": {"terminal_output": {"terminal_id": "t", "data": "0123456789abcdef"}}})
    assert record["terminals"][0] == {
        "terminal_id": "t",
        "output": "6789abcdef",
        "truncated": True,
        "exited": False,
        "exit_code": None,
    }


def test_content_is_replaced_as_a_whole_and_kept_when_an_update_has_none():
    edit = {"type": "diff", "path": "a", "oldText": "1", "newText": "2"}
    record = apply({"content": [edit, {"type": "terminal", "terminalId": "x"}, text("note")]})
    assert record["output"] == "note"
    assert len(record["diffs"]) == 1
    assert len(record["terminals"]) == 1
    assert merge_update(record, {"status": "completed"}) == record | {"status": "completed"}
    replaced = merge_update(record, {"content": [text("denied")]})
    assert replaced["output"] == "denied"
    assert "diffs" not in replaced
    assert "terminals" not in replaced


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
content_items = st.fixed_dictionaries(
    {"type": st.sampled_from(["content", "diff", "terminal", "other"])},
    optional={
        "content": json_values,
        "path": json_values,
        "oldText": json_values,
        "newText": json_values,
        "terminalId": json_values,
    },
)
meta = st.dictionaries(
    st.sampled_from(["terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit", "other"]),
    st.fixed_dictionaries({}, optional={"terminal_id": json_values, "data": json_values, "exit_code": json_values})
    | json_values,
)
updates = st.fixed_dictionaries(
    {},
    optional={
        "toolCallId": json_values,
        "title": json_values,
        "status": json_values,
        "content": st.lists(content_items, max_size=4) | json_values,
        "_meta": meta | json_values,
    },
)


@given(st.lists(updates, max_size=5))
def test_whatever_the_agent_sends_the_record_is_made_and_stays_json(sequence):
    record = apply(*sequence)
    assert json.loads(json.dumps(record)) == record
    for kept in record.get("terminals", []):
        assert isinstance(kept["output"], str)
    for kept in record.get("diffs", []):
        assert all(isinstance(line["text"], str) for line in kept["lines"])


# Permission -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "kind", "status", "permission"),
    [
        ("selected", "allow_once", "in_progress", "allowed"),
        ("selected", "allow_always", "in_progress", "allowed"),
        ("selected", "reject_once", "failed", "rejected"),
        ("cancelled", "", "failed", "cancelled"),
    ],
)
def test_a_pending_tool_call_follows_its_permission(outcome, kind, status, permission):
    record = after_permission({"toolCallId": "t", "status": "pending"}, outcome=outcome, option_kind=kind)
    assert (record["status"], record["permission"]) == (status, permission)


def test_a_tool_call_the_agent_moved_on_is_left_as_the_agent_said():
    record = {"toolCallId": "t", "status": "completed"}
    assert after_permission(record, outcome="cancelled", option_kind="") == record
