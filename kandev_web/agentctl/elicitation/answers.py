"""Checking and normalising the `answers` of `agent.elicitations.respond`.

agentctl is the only process that can judge an answer
(`docs/decisions.md#f10-answer-validation`): the web app forwards every
submission without adjudicating it. A payload with any problem
is refused as a whole with `VALIDATION_ERROR` and the pending stays open, so the
problems are reported exhaustively, in payload order, for the operator to fix.

A valid payload is then normalised (F12): options de-duplicated and put in
declaration order, whatever order the browser sent them in, because the bridge
records a multi-select in the order it receives it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from kandev_web.agentctl.elicitation.types import Answer, MappedForm, Question

MAX_TEXT_CHARS = 10_000


class ProblemCode(StrEnum):
    ANSWERS_NOT_A_LIST = "answers_not_a_list"
    ANSWER_NOT_AN_OBJECT = "answer_not_an_object"
    BAD_QUESTION_ID = "bad_question_id"
    BAD_SELECTED_OPTIONS = "bad_selected_options"
    BAD_CUSTOM_TEXT = "bad_custom_text"
    UNKNOWN_QUESTION = "unknown_question"
    DUPLICATE_QUESTION = "duplicate_question"
    TOO_MANY_OPTIONS = "too_many_options"
    UNKNOWN_OPTION = "unknown_option"
    TEXT_NOT_ACCEPTED = "text_not_accepted"
    TEXT_TOO_LONG = "text_too_long"


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason an answers payload is refused.

    `index` is the entry's position in `answers` (None for the payload itself). The
    operator's free text is never quoted: it may be a secret.
    """

    code: ProblemCode
    index: int | None = None
    question_id: str | None = None
    option_id: str | None = None

    def to_wire(self) -> dict[str, object]:
        """An entry of the `VALIDATION_ERROR`'s `details.problems`."""
        return {
            "code": self.code.value,
            "index": self.index,
            "question_id": self.question_id,
            "option_id": self.option_id,
        }


class InvalidAnswers(ValueError):
    """Raised where a caller skipped validation; carries what validation would report."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__(", ".join(problem.code.value for problem in problems))
        self.problems = tuple(problems)


def validate_answers(form: MappedForm, answers_payload: object) -> list[Problem]:
    """Every F10 problem in the `answers` value of a respond payload; [] when it is valid."""
    parsed, problems = _parse(answers_payload)
    return sorted(problems + find_problems(form, parsed), key=lambda p: -1 if p.index is None else p.index)


def normalise(form: MappedForm, answers_payload: object) -> tuple[Answer, ...]:
    """The valid payload as answers in question (D1) order, options in declaration order.

    Raises InvalidAnswers when `validate_answers` would report a problem.
    """
    parsed, problems = _parse(answers_payload)
    problems += find_problems(form, parsed)
    if problems:
        raise InvalidAnswers(problems)
    by_id = {answer.question_id: answer for _, answer in parsed}
    return tuple(
        Answer(
            question_id=question.id,
            selected_options=declaration_order(question, by_id[question.id].selected_options),
            custom_text=by_id[question.id].custom_text,
        )
        for question in form.questions
        if question.id in by_id
    )


def declaration_order(question: Question, selected: Iterable[str]) -> tuple[str, ...]:
    """The question's consts that are selected, once each, in the order they were declared."""
    chosen = set(selected)
    return tuple(option.id for option in question.options if option.id in chosen)


def find_problems(form: MappedForm, answers: Iterable[tuple[int, Answer]]) -> list[Problem]:
    """The semantic F10 checks over well-formed answers, each paired with its payload index."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, answer in answers:
        question = form.question(answer.question_id)
        if question is None:
            problems.append(Problem(ProblemCode.UNKNOWN_QUESTION, index, answer.question_id))
            continue
        if question.id in seen:
            problems.append(Problem(ProblemCode.DUPLICATE_QUESTION, index, question.id))
            continue
        seen.add(question.id)
        problems += _option_problems(index, question, answer)
        problems += _text_problems(index, question, answer)
    return problems


def _option_problems(index: int, question: Question, answer: Answer) -> list[Problem]:
    distinct = list(dict.fromkeys(answer.selected_options))
    consts = {option.id for option in question.options}
    # Counted after de-duplication: F12 folds a repeated option into one anyway.
    too_many = question.kind == "single" and len(distinct) > 1
    problems = [Problem(ProblemCode.TOO_MANY_OPTIONS, index, question.id)] if too_many else []
    return problems + [Problem(ProblemCode.UNKNOWN_OPTION, index, question.id, o) for o in distinct if o not in consts]


def _text_problems(index: int, question: Question, answer: Answer) -> list[Problem]:
    # Judged on the trimmed text, which is what would be sent: whitespace is no text.
    text = answer.custom_text.strip()
    if not text:
        return []
    if not question.accepts_text:
        return [Problem(ProblemCode.TEXT_NOT_ACCEPTED, index, question.id)]
    if len(text) > MAX_TEXT_CHARS:
        return [Problem(ProblemCode.TEXT_TOO_LONG, index, question.id)]
    return []


def _parse(answers_payload: object) -> tuple[list[tuple[int, Answer]], list[Problem]]:
    """Well-formed entries with their indices, and a problem per malformed field."""
    if not isinstance(answers_payload, list):
        return [], [Problem(ProblemCode.ANSWERS_NOT_A_LIST)]
    parsed: list[tuple[int, Answer]] = []
    problems: list[Problem] = []
    for index, entry in enumerate(answers_payload):
        answer = _parse_entry(index, entry)
        if isinstance(answer, Answer):
            parsed.append((index, answer))
        else:
            problems += answer
    return parsed, problems


def _parse_entry(index: int, entry: object) -> Answer | list[Problem]:
    """One `answers[]` entry. Absent or null `selected_options` / `custom_text` mean none."""
    if not isinstance(entry, dict):
        return [Problem(ProblemCode.ANSWER_NOT_AN_OBJECT, index)]
    question_id = entry.get("question_id")
    if not isinstance(question_id, str):
        return [Problem(ProblemCode.BAD_QUESTION_ID, index)]
    selected = entry.get("selected_options")
    selected = [] if selected is None else selected
    text = entry.get("custom_text")
    text = "" if text is None else text
    problems: list[Problem] = []
    if not isinstance(selected, list) or not all(isinstance(option, str) for option in selected):
        problems.append(Problem(ProblemCode.BAD_SELECTED_OPTIONS, index, question_id))
    if not isinstance(text, str):
        problems.append(Problem(ProblemCode.BAD_CUSTOM_TEXT, index, question_id))
    if problems:
        return problems
    return Answer(question_id=question_id, selected_options=tuple(selected), custom_text=text)
