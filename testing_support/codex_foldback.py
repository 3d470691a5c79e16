"""What codex-acp 2.6.0 tells the model for an `elicitation/create` response, in Python.

A transcription of `userInputAnswers` in `@agentclientprotocol/codex-acp` 2.6.0
(`src/CodexElicitationHandler.ts`, for a client that is not Air), checked against
the recorded fold-back in `tests/fixtures/codex-acp-2.6.0/request_user_input_foldback.json`
(`tests/agentctl/elicitation/test_codex_forms.py`), so that the cases the fixture does not record (a note alone,
a pick alone, several questions) can be folded back too:

- anything but `accept` tells the model `{"answers": {}}`;
- per question, its own key's value (a non-blank string, or a non-empty list of
  strings) is the first answer(s); an `isOther` question with options then reads its
  note key, non-blank, as `"user_note: <trimmed note>"`;
- a question with no answer is left out.

The questions are read back from the schema, as Codex built it: every property that
is not a note; a question's note is the property marked with its `questionId`.
"""

from __future__ import annotations

import json
from typing import Any

NOTE_PREFIX = "user_note: "


def _codex(prop: Any) -> dict[str, Any]:
    meta = prop.get("_meta") if isinstance(prop, dict) else None
    codex = meta.get("codex") if isinstance(meta, dict) else None
    return codex if isinstance(codex, dict) else {}


def _value(content: dict[str, Any], key: str) -> list[str] | None:
    value = content.get(key)
    if isinstance(value, str):
        return None if value.strip() == "" else [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return value
    return None


def fold_back(params: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """The `{"answers": …}` object the model reads for `response` to the request `params`."""
    if response.get("action") != "accept":
        return {"answers": {}}
    content = response.get("content")
    content = content if isinstance(content, dict) else {}
    properties: dict[str, Any] = params["requestedSchema"]["properties"]
    notes = {
        _codex(prop)["questionId"]: key for key, prop in properties.items() if _codex(prop).get("role") == "user_note"
    }
    answers: dict[str, Any] = {}
    for key, prop in properties.items():
        if _codex(prop).get("role") == "user_note":
            continue
        values = list(_value(content, key) or [])
        has_other = _codex(prop).get("isOther") is True and bool(prop.get("oneOf"))
        if has_other and key in notes:
            note = _value(content, notes[key])
            values += [f"{NOTE_PREFIX}{item.strip()}" for item in note or []]
        if values:
            answers[key] = {"answers": values}
    return {"answers": answers}


def recorded_output(foldback_fixture: dict[str, Any]) -> dict[str, Any]:
    """The recorded `function_call_output`'s `output`, decoded."""
    return json.loads(foldback_fixture["function_call_output"]["output"])
