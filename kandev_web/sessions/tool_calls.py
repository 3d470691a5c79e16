"""A tool call's timeline record, kept up to date from what the agent reports of it.

ACP reports a tool call once (``tool_call``) and then what changed
(``tool_call_update``): a field an update leaves out keeps its value, and
``content`` is replaced as a whole. The record keeps the fields the timeline
shows and the content in the three kinds ACP has: text (``output``), file
edits (``diffs``, each a :class:`~kandev_web.rendering.diff.FileDiff`) and
terminals (``terminals``).

A terminal's output does not travel in ACP's content, only the terminal's id
does. agentctl advertises the Claude bridge's ``_meta.terminal_output``
extension, so the bridge sends it in an update's ``_meta``:
``terminal_info`` (a terminal starts), ``terminal_output`` (all of it so
far), ``terminal_output_delta`` (more of it) and ``terminal_exit``.

Pure: what the agent sent in, the new record out. Anything the agent sent
may be of any JSON type, and is never trusted to be what ACP says.
"""

from __future__ import annotations

from typing import Any

from kandev_web.rendering.diff import file_diff
from kandev_web.rendering.terminal import plain_output, tail

#: The ACP fields the record keeps as they were last reported.
FIELDS = ("toolCallId", "title", "kind", "status", "locations", "rawInput", "rawOutput")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _items(update: dict, kind: str) -> list[dict]:
    content = update.get("content")
    items = content if isinstance(content, list) else []
    return [item for item in items if isinstance(item, dict) and item.get("type") == kind]


def _new_terminal(terminal_id: str) -> dict:
    return {"terminal_id": terminal_id, "output": "", "truncated": False, "exited": False, "exit_code": None}


def merge_update(previous: dict, update: dict) -> dict:
    """The record ``previous`` (empty for a new tool call) once ``update`` is applied."""
    metadata = dict(previous)
    for key in FIELDS:
        if update.get(key) is not None:
            metadata[key] = update[key]
    terminals = {terminal["terminal_id"]: terminal for terminal in previous.get("terminals", [])}
    if update.get("content") and isinstance(update["content"], list):
        texts = (item.get("content") for item in _items(update, "content"))
        metadata["output"] = "\n".join(
            _text(text.get("text")) for text in texts if isinstance(text, dict) and text.get("type") == "text"
        ).strip()
        metadata["diffs"] = [
            file_diff(_text(item.get("path")), item["oldText"] if isinstance(item.get("oldText"), str) else None,
                      item["newText"])
            for item in _items(update, "diff")
            if isinstance(item.get("newText"), str)
        ]  # fmt: skip
        # A terminal no longer in the content is no longer shown.
        ids = [_text(item.get("terminalId")) for item in _items(update, "terminal")]
        terminals = {id_: terminals.get(id_) or _new_terminal(id_) for id_ in ids if id_}
    meta = update.get("_meta")
    if isinstance(meta, dict):
        _apply_terminal_meta(terminals, meta)
    if terminals:
        metadata["terminals"] = list(terminals.values())
    else:
        metadata.pop("terminals", None)
    if not metadata.get("diffs"):
        metadata.pop("diffs", None)
    return metadata


def _apply_terminal_meta(terminals: dict[str, dict], meta: dict) -> None:
    def terminal(key: str) -> tuple[dict, dict] | None:
        value = meta.get(key)
        if not isinstance(value, dict) or not _text(value.get("terminal_id")):
            return None
        terminal_id = value["terminal_id"]
        terminals[terminal_id] = dict(terminals.get(terminal_id) or _new_terminal(terminal_id))
        return terminals[terminal_id], value

    terminal("terminal_info")
    for key, replaces in (("terminal_output", True), ("terminal_output_delta", False)):
        if found := terminal(key):
            state, value = found
            data = plain_output(_text(value.get("data")))
            state["output"], cut = tail(data if replaces else state["output"] + data)
            state["truncated"] = cut or (state["truncated"] and not replaces)
    if found := terminal("terminal_exit"):
        state, value = found
        state["exited"] = True
        code = value.get("exit_code")
        state["exit_code"] = code if isinstance(code, int) and not isinstance(code, bool) else None


def after_permission(metadata: dict, *, outcome: str, option_kind: str) -> dict:
    """The record once the operator answered the permission the tool call waited for.

    A tool call still "pending" then runs (allowed) or does not (rejected,
    or the request cancelled): the status says so at once, not only when
    (if ever) the agent reports it. A status the agent already moved on
    is the agent's word and is kept.
    """
    if metadata.get("status", "pending") != "pending":
        return metadata
    if outcome != "selected":
        permission = "cancelled"
    elif option_kind.startswith("reject"):
        permission = "rejected"
    else:
        permission = "allowed"
    return {**metadata, "status": "in_progress" if permission == "allowed" else "failed", "permission": permission}
