"""The ACP result written back for an `elicitation/create`.

`content` is sparse (`docs/decisions/answers.md#response-content`): a key appears only when it carries an
answer, never as `null` or `""`, because the bridge treats both as "unanswered" at
best and, up to 0.99, a single `null` voids every answer in the form. Per question:

| operator's answer                          | key written                       |
|--------------------------------------------|-----------------------------------|
| option(s), no text                         | question key: const, or [consts]  |
| text (with or without options), companion  | companion key only: trimmed text  |
| text, Codex's note companion               | companion key: trimmed text, and  |
|                                            | question key: the picks, else the |
|                                            | "None of the above" option        |
| text, no companion (free-text question)    | question key: trimmed text        |
| a value (boolean, number, integer)         | question key: the JSON value      |
| nothing, or whitespace-only text           | nothing                           |

The selection is left out when text goes to the companion: 0.65.0 would discard it,
and 0.78+ would keep it and demote the text to a note, while the overlay has told the
operator their text replaces the selection. Sending only the companion makes every
bridge version record what the operator chose (`docs/decisions/answers.md#ac-12i-typed-text-replaces-the-choice`).
Codex is the other way round: it adds the note to the pick (the model reads
`["Red", "user_note: …"]`), and a note sent alone would lose the pick, so both go
(`docs/decisions/mapping.md#codex-forms`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kandev_web.agentctl.elicitation.answers import (
    TYPED_KINDS,
    InvalidAnswers,
    answer_text,
    find_problems,
    sent_picks,
)
from kandev_web.agentctl.elicitation.constraints import as_integer
from kandev_web.agentctl.elicitation.types import Answer, ContentValue, MappedForm, Question


def build_response(form: MappedForm, answers: Sequence[Answer] | None, rejected: bool) -> dict[str, object]:
    """`decline` for Skip, otherwise `accept` with sparse content.

    `answers` must pass validation (see `answers.normalise`); InvalidAnswers is raised
    otherwise rather than guessing what the operator meant. No answers at all is an
    empty submission, `accept {}` (AC-12b), which is distinct from Skip on the wire.
    """
    if rejected:
        return decline_response()
    answers = answers or ()
    problems = find_problems(form, enumerate(answers))
    if problems:
        raise InvalidAnswers(problems)
    by_id = {answer.question_id: answer for answer in answers}
    content: dict[str, ContentValue] = {}
    for question in form.questions:
        answer = by_id.get(question.id)
        if answer is not None:
            content.update(_content_entries(question, answer))
    return {"action": "accept", "content": content}


def reported_response(form: MappedForm, result: dict[str, object]) -> dict[str, object]:
    """`result` as agentctl reports it to the web app: what a sensitive question got stays with the agent.

    A value typed into a credential-looking field goes to the agent and
    nowhere else (`docs/decisions/operator.md#secrets`), so the `content` of the
    `agent.elicitations.respond` response and of `elicitation.settled` leaves
    out the keys of sensitive questions (theirs and their companions') and
    lists those questions' ids in `withheld`.
    """
    content = result.get("content")
    if not isinstance(content, dict):
        return dict(result)
    hidden = {
        question.id: {question.id, question.companion_key} - {None} for question in form.questions if question.sensitive
    }
    withheld = [question_id for question_id, keys in hidden.items() if keys & content.keys()]
    if not withheld:
        return dict(result)
    secret_keys = set().union(*hidden.values())
    kept = {key: value for key, value in content.items() if key not in secret_keys}
    return {**result, "content": kept, "withheld": withheld}


def decline_response() -> dict[str, object]:
    """Skip, the answer timeout (AC-64), and every request the mapping declines."""
    return {"action": "decline"}


def cancel_response() -> dict[str, object]:
    """Turn cancelled, request withdrawn, agent gone or agentctl shutting down (AC-15)."""
    return {"action": "cancel"}


def _content_entries(question: Question, answer: Answer) -> dict[str, ContentValue]:
    """The `content` keys one answer writes: none, its own, its companion's, or (Codex's note) both."""
    entries: dict[str, ContentValue] = {}
    if question.kind in TYPED_KINDS:
        value = answer.value
        if value is None or isinstance(value, str):
            return entries  # validation refuses a string here; omission is "unanswered"
        if question.kind == "integer" and isinstance(value, float):
            value = as_integer(value)  # validation guarantees it is integral
            assert value is not None
        return {question.id: value}
    picks = sent_picks(question, answer)
    if picks:
        entries[question.id] = list(picks) if question.kind == "multi" else picks[0]
    text = answer_text(question, answer)
    if text:
        # Validation guarantees the question accepts text: it has a companion or is free text.
        entries[question.companion_key or question.id] = text
    return entries
