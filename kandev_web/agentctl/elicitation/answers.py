"""Checking and normalising the `answers` of `agent.elicitations.respond`.

agentctl is the only process that can judge an answer
(`docs/decisions/answers.md#f10-answer-validation`): the web app forwards every
submission without adjudicating it. A payload with any problem
is refused as a whole with `VALIDATION_ERROR` and the pending stays open, so the
problems are reported exhaustively, in payload order, for the operator to fix,
each with a sentence that names the question and never quotes what was typed.

A valid payload is then normalised (F12): options de-duplicated and put in
declaration order, whatever order the browser sent them in, because the bridge
records a multi-select in the order it receives it; an integer sent as `3.0` is 3.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from kandev_web.agentctl.elicitation.constraints import (
    Format,
    as_integer,
    count_violations,
    is_number,
    number_violations,
    text_violations,
)
from kandev_web.agentctl.elicitation.types import Answer, MappedForm, Question, Value

MAX_TEXT_CHARS = 10_000

TYPED_KINDS = frozenset({"boolean", "number", "integer"})


class ProblemCode(StrEnum):
    ANSWERS_NOT_A_LIST = "answers_not_a_list"
    ANSWER_NOT_AN_OBJECT = "answer_not_an_object"
    BAD_QUESTION_ID = "bad_question_id"
    BAD_SELECTED_OPTIONS = "bad_selected_options"
    BAD_CUSTOM_TEXT = "bad_custom_text"
    BAD_VALUE = "bad_value"
    UNKNOWN_QUESTION = "unknown_question"
    DUPLICATE_QUESTION = "duplicate_question"
    TOO_MANY_OPTIONS = "too_many_options"
    UNKNOWN_OPTION = "unknown_option"
    TEXT_NOT_ACCEPTED = "text_not_accepted"
    TEXT_TOO_LONG = "text_too_long"
    VALUE_NOT_ACCEPTED = "value_not_accepted"
    WRONG_TYPE = "wrong_type"
    NOT_AN_INTEGER = "not_an_integer"
    BELOW_MINIMUM = "below_minimum"
    ABOVE_MAXIMUM = "above_maximum"
    TOO_SHORT = "too_short"
    TOO_LONG = "too_long"
    PATTERN_MISMATCH = "pattern_mismatch"
    FORMAT_MISMATCH = "format_mismatch"
    TOO_FEW_ITEMS = "too_few_items"
    TOO_MANY_ITEMS = "too_many_items"
    REQUIRED_UNANSWERED = "required_unanswered"


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason an answers payload is refused.

    `index` is the entry's position in `answers` (None for the payload itself, and for
    a required question left unanswered). `limit` is the constraint that was broken
    (a minimum, a length, a format, a pattern), or for `wrong_type` the kind that was
    expected. The operator's text is never quoted: it may be a secret. `label` is how
    the sentence names the question (its title, else its key).
    """

    code: ProblemCode
    index: int | None = None
    question_id: str | None = None
    option_id: str | None = None
    limit: object = None
    label: str | None = field(default=None, compare=False)

    def to_wire(self) -> dict[str, object]:
        """An entry of the `VALIDATION_ERROR`'s `details.problems`."""
        wire: dict[str, object] = {
            "code": self.code.value,
            "index": self.index,
            "question_id": self.question_id,
            "option_id": self.option_id,
        }
        if self.limit is not None:
            wire["limit"] = self.limit
        wire["message"] = self.sentence()
        return wire

    def sentence(self) -> str:  # noqa: C901 - one flat match, a sentence per problem code
        """The problem in English, for API clients and agentctl's own tools (the web app translates its own)."""
        q = f"“{self.label or self.question_id}”"
        n = "?" if self.index is None else self.index + 1
        limit = self.limit
        match self.code:
            case ProblemCode.ANSWERS_NOT_A_LIST:
                return "The answers must be a list."
            case ProblemCode.ANSWER_NOT_AN_OBJECT:
                return f"Answer {n} is not an object."
            case ProblemCode.BAD_QUESTION_ID:
                return f"Answer {n} does not say which question it answers."
            case ProblemCode.BAD_SELECTED_OPTIONS:
                return f"The options chosen for {q} are not a list of option ids."
            case ProblemCode.BAD_CUSTOM_TEXT:
                return f"The typed answer to {q} is not text."
            case ProblemCode.BAD_VALUE:
                return f"The value given for {q} is not a boolean, a number or text."
            case ProblemCode.UNKNOWN_QUESTION:
                return f"There is no question {q}."
            case ProblemCode.DUPLICATE_QUESTION:
                return f"{q} is answered twice."
            case ProblemCode.TOO_MANY_OPTIONS:
                return f"{q} takes one option only."
            case ProblemCode.UNKNOWN_OPTION:
                return f"{q} has no option “{self.option_id}”."
            case ProblemCode.TEXT_NOT_ACCEPTED:
                return f"{q} takes no typed answer."
            case ProblemCode.TEXT_TOO_LONG:
                return f"The answer to {q} is longer than {MAX_TEXT_CHARS:,} characters."
            case ProblemCode.VALUE_NOT_ACCEPTED:
                return f"{q} is answered by choosing its options, not with a value."
            case ProblemCode.WRONG_TYPE:
                expected = {"boolean": "yes or no", "number": "a number", "integer": "a whole number"}
                return f"{q} must be {expected.get(str(limit), 'text')}."
            case ProblemCode.NOT_AN_INTEGER:
                return f"{q} must be a whole number."
            case ProblemCode.BELOW_MINIMUM:
                return f"{q} must be at least {limit}."
            case ProblemCode.ABOVE_MAXIMUM:
                return f"{q} must be at most {limit}."
            case ProblemCode.TOO_SHORT:
                return f"{q} must be at least {limit} characters long."
            case ProblemCode.TOO_LONG:
                return f"{q} must be at most {limit} characters long."
            case ProblemCode.PATTERN_MISMATCH:
                return f"{q} does not match the form the agent asked for ({limit})."
            case ProblemCode.FORMAT_MISMATCH:
                formats = {
                    Format.EMAIL: "an e-mail address",
                    Format.URI: "a URL",
                    Format.DATE: "a date",
                    Format.DATE_TIME: "a date and time with its time zone",
                }
                return f"{q} must be {formats.get(Format(str(limit)), 'of the right form')}."
            case ProblemCode.TOO_FEW_ITEMS:
                return f"Choose at least {limit} options for {q}."
            case ProblemCode.TOO_MANY_ITEMS:
                return f"Choose at most {limit} options for {q}."
            case ProblemCode.REQUIRED_UNANSWERED:
                return f"{q} needs an answer."


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
            value=_normal_value(question, by_id[question.id].value),
        )
        for question in form.questions
        if question.id in by_id
    )


def declaration_order(question: Question, selected: Iterable[str]) -> tuple[str, ...]:
    """The question's consts that are selected, once each, in the order they were declared."""
    chosen = set(selected)
    return tuple(option.id for option in question.options if option.id in chosen)


def answer_text(question: Question, answer: Answer) -> str:
    """The trimmed text an answer gives: a `text` question's `value`, else its `custom_text`."""
    if question.kind == "text" and isinstance(answer.value, str):
        return answer.value.strip()
    return answer.custom_text.strip()


def find_problems(form: MappedForm, answers: Iterable[tuple[int, Answer]]) -> list[Problem]:
    """The semantic F10 checks over well-formed answers, each paired with its payload index.

    A required question counts as answered when its own key would get a value; text
    that goes to a companion key leaves it unanswered, since that is what the schema sees.
    """
    problems: list[Problem] = []
    seen: set[str] = set()
    given: set[str] = set()
    for index, answer in answers:
        question = form.question(answer.question_id)
        if question is None:
            problems.append(Problem(ProblemCode.UNKNOWN_QUESTION, index, answer.question_id))
            continue
        if question.id in seen:
            problems.append(_problem(ProblemCode.DUPLICATE_QUESTION, index, question))
            continue
        seen.add(question.id)
        problems += answer_problems(question, answer, index)
        if gives_own_key(question, answer):
            given.add(question.id)
    problems += [
        _problem(ProblemCode.REQUIRED_UNANSWERED, None, question)
        for question in form.questions
        if question.required and question.id not in given
    ]
    return problems


def gives_own_key(question: Question, answer: Answer) -> bool:
    """Whether the answer puts a value under the question's own key (not its companion's)."""
    if question.kind in TYPED_KINDS:
        return answer.value is not None
    if answer_text(question, answer) and not question.note:
        return question.companion_key is None
    return bool(sent_picks(question, answer))


def sent_picks(question: Question, answer: Answer) -> tuple[str, ...]:
    """The consts that go under the question's own key, in declaration order; () when none do.

    Beside the Claude bridge's companion, typed text replaces the picks (AC-12i).
    Beside Codex's note it is added to them, and a note with no pick is sent with
    the question's "None of the above" option, when it has one: the operator's text
    is then the answer, which is what that option says.
    """
    picks = declaration_order(question, answer.selected_options)
    if not answer_text(question, answer) or question.kind == "text":
        return picks
    if not question.note:
        return ()
    if not picks and question.other_option is not None:
        return (question.other_option,)
    return picks


def answer_problems(question: Question, answer: Answer, index: int | None) -> list[Problem]:
    """What is wrong with one well-formed answer to a known question; also checks a schema's default."""
    problems = _option_problems(index, question, answer)
    problems += _text_problems(index, question, answer)
    problems += _value_problems(index, question, answer)
    return problems


def _problem(code: ProblemCode, index: int | None, question: Question, *, limit: object = None) -> Problem:
    return Problem(code, index, question.id, limit=limit, label=question.label)


def _option_problems(index: int | None, question: Question, answer: Answer) -> list[Problem]:
    distinct = list(dict.fromkeys(answer.selected_options))
    consts = {option.id for option in question.options}
    # Counted after de-duplication: F12 folds a repeated option into one anyway.
    too_many = question.kind == "single" and len(distinct) > 1
    problems = [_problem(ProblemCode.TOO_MANY_OPTIONS, index, question)] if too_many else []
    problems += [
        Problem(ProblemCode.UNKNOWN_OPTION, index, question.id, o, label=question.label)
        for o in distinct
        if o not in consts
    ]
    # The item counts bind the picks the schema will see: none when text replaces them.
    if question.kind == "multi" and distinct and sent_picks(question, answer) and not problems:
        problems += [
            _problem(ProblemCode(v.value), index, question, limit=_item_limit(question, v.value))
            for v in count_violations(question.constraints, len(distinct))
        ]
    return problems


def _item_limit(question: Question, code: str) -> int | None:
    c = question.constraints
    return c.min_items if code == ProblemCode.TOO_FEW_ITEMS else c.max_items


def _text_problems(index: int | None, question: Question, answer: Answer) -> list[Problem]:
    # Judged on the trimmed text, which is what would be sent: whitespace is no text.
    text = answer_text(question, answer)
    if not text:
        return []
    if not question.accepts_text:
        return [_problem(ProblemCode.TEXT_NOT_ACCEPTED, index, question)]
    if len(text) > MAX_TEXT_CHARS:
        return [_problem(ProblemCode.TEXT_TOO_LONG, index, question)]
    if question.kind != "text":
        return []  # companion text: the question's own constraints bind its options, not the text
    c = question.constraints
    limits = {
        ProblemCode.TOO_SHORT: c.min_length,
        ProblemCode.TOO_LONG: c.max_length,
        ProblemCode.PATTERN_MISMATCH: c.pattern,
        ProblemCode.FORMAT_MISMATCH: None if c.format is None else c.format.value,
    }
    return [
        _problem(ProblemCode(v.value), index, question, limit=limits[ProblemCode(v.value)])
        for v in text_violations(c, text)
    ]


def _value_problems(index: int | None, question: Question, answer: Answer) -> list[Problem]:
    value = answer.value
    if value is None:
        return []
    if question.kind in ("single", "multi"):
        return [_problem(ProblemCode.VALUE_NOT_ACCEPTED, index, question)]
    if question.kind == "text":
        return [] if isinstance(value, str) else [_problem(ProblemCode.WRONG_TYPE, index, question, limit="text")]
    if question.kind == "boolean":
        ok = isinstance(value, bool)
        return [] if ok else [_problem(ProblemCode.WRONG_TYPE, index, question, limit="boolean")]
    if not is_number(value):
        return [_problem(ProblemCode.WRONG_TYPE, index, question, limit=question.kind)]
    if question.kind == "integer" and as_integer(value) is None:
        return [_problem(ProblemCode.NOT_AN_INTEGER, index, question)]
    c = question.constraints
    limits = {ProblemCode.BELOW_MINIMUM: c.minimum, ProblemCode.ABOVE_MAXIMUM: c.maximum}
    return [
        _problem(ProblemCode(v.value), index, question, limit=limits[ProblemCode(v.value)])
        for v in number_violations(c, value)
    ]


def _normal_value(question: Question, value: Value | None) -> Value | None:
    """An integer question's `3.0` is sent as `3`; everything else as given."""
    if question.kind == "integer" and isinstance(value, float):
        return as_integer(value)
    return value


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
    """One `answers[]` entry. Absent or null `selected_options` / `custom_text` / `value` mean none."""
    if not isinstance(entry, dict):
        return [Problem(ProblemCode.ANSWER_NOT_AN_OBJECT, index)]
    question_id = entry.get("question_id")
    if not isinstance(question_id, str):
        return [Problem(ProblemCode.BAD_QUESTION_ID, index)]
    selected = entry.get("selected_options")
    selected = [] if selected is None else selected
    text = entry.get("custom_text")
    text = "" if text is None else text
    value = entry.get("value")
    problems: list[Problem] = []
    if not isinstance(selected, list) or not all(isinstance(option, str) for option in selected):
        problems.append(Problem(ProblemCode.BAD_SELECTED_OPTIONS, index, question_id))
    if not isinstance(text, str):
        problems.append(Problem(ProblemCode.BAD_CUSTOM_TEXT, index, question_id))
    if value is not None and not (isinstance(value, str | bool) or is_number(value)):
        problems.append(Problem(ProblemCode.BAD_VALUE, index, question_id))
    if problems:
        return problems
    return Answer(question_id=question_id, selected_options=tuple(selected), custom_text=text, value=value)
