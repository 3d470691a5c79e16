"""Validating an ask_user_question_kandev bundle and the operator's answers.

Pure functions with Kandev's limits and messages, verbatim: one validator for the
MCP tool and for HTTP. Elicitation-backed records skip these limits; agentctl
validates those (F3, ``docs/decisions/answers.md#f3-validation-on-the-two-paths``).

A bundle leaves :func:`parse_bundle` in the one shape a question has past the
doors it comes in by: agentctl's wire question (``Question.to_wire()``,
``docs/agent-stream.md#elicitationrequested``), as the record stores it and
every reader reads it. The functions after it take questions in that shape.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kandev_web import limits
from kandev_web.agentctl.elicitation.types import Option, Question

MIN_QUESTIONS, MAX_QUESTIONS = 1, 4
MIN_OPTIONS, MAX_OPTIONS = 2, 6
MAX_TITLE = 12
MAX_CUSTOM_TEXT = limits.ASK_ANSWER_CHARS

#: Where an answer's typed text reaches the agent: its entry's ``custom_text`` (:func:`tool_result`). Every
#: question of the tool takes typed text beside its options, which is what a companion is to agentctl.
CUSTOM_TEXT = "custom_text"


class InvalidBundle(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Answer:
    question_id: str
    selected_option: str | None = None
    custom_text: str = ""


def _text(value) -> str:
    return value.strip() if isinstance(value, str) else ""


def parse_bundle(questions: object) -> list[dict[str, object]]:
    """The tool's input as wire questions, with ids filled in; raise ``InvalidBundle``.

    Each is a single choice that also takes typed text. Its options' ids
    (``<question id>_opt<n>``) are what the agent gets back as ``selected_option``.
    """
    if not isinstance(questions, list):
        raise InvalidBundle(["questions must contain at least 1 question"])
    errors: list[str] = []
    if len(questions) < MIN_QUESTIONS:
        errors.append(f"questions must contain at least {MIN_QUESTIONS} question")
    if len(questions) > MAX_QUESTIONS:
        errors.append(f"questions must contain at most {MAX_QUESTIONS} questions")
    parsed: list[dict[str, object]] = []
    seen: set[str] = set()
    for index, raw in enumerate(questions[:MAX_QUESTIONS], start=1):
        raw = raw if isinstance(raw, dict) else {}
        qid = _text(raw.get("id")) or f"q{index}"
        if qid in seen:
            errors.append(f"duplicate question id {qid!r}")
        seen.add(qid)
        prompt = _text(raw.get("prompt"))
        if not prompt:
            errors.append(f"question {index} is missing required 'prompt'")
        title = _text(raw.get("title"))
        if len(title) > MAX_TITLE:
            errors.append(f"question {index} title must be at most {MAX_TITLE} characters")
        question = Question(
            id=qid,
            title=title or None,
            prompt=prompt,
            kind="single",
            options=_parse_options(index, qid, raw, errors),
            companion_key=CUSTOM_TEXT,
            sensitive=False,
        )
        parsed.append(question.to_wire())
    if errors:
        raise InvalidBundle(errors)
    return parsed


def _parse_options(index: int, qid: str, raw: dict, errors: list[str]) -> tuple[Option, ...]:
    """Question ``index``'s options, with their ids; what is wrong with them goes on ``errors``."""
    raw_options = raw["options"] if isinstance(raw.get("options"), list) else []
    if len(raw_options) < MIN_OPTIONS:
        errors.append(f"question {index} must have at least {MIN_OPTIONS} options")
    if len(raw_options) > MAX_OPTIONS:
        errors.append(f"question {index} must have at most {MAX_OPTIONS} options")
    options = []
    for o_index, option in enumerate(raw_options[:MAX_OPTIONS], start=1):
        option = option if isinstance(option, dict) else {}
        label, description = _text(option.get("label")), _text(option.get("description"))
        if not label:
            errors.append(f"question {index} option {o_index} is missing required 'label'")
        if not description:
            errors.append(f"question {index} option {o_index} is missing required 'description'")
        options.append(Option(f"{qid}_opt{o_index}", label, description))
    return tuple(options)


def dedup_key(questions: Sequence[Mapping[str, Any]]) -> list:
    """What makes two bundles the same: prompts and options in order; ids and titles do not count."""
    return [[q["prompt"], [[o["id"], o["label"], o["description"]] for o in q["options"]]] for q in questions]


def parse_answers(questions: Sequence[Mapping[str, Any]], answers: object) -> tuple[Answer, ...]:
    """The operator's answers, one per question, single choice or custom text; raise ``InvalidBundle``."""
    if not isinstance(answers, list):
        answers = []
    errors: list[str] = []
    if len(answers) != len(questions):
        errors.append(f"expected {len(questions)} answers, got {len(answers)}")
    by_id = {q["id"]: q for q in questions}
    parsed, seen = [], set()
    for index, raw in enumerate(answers, start=1):
        raw = raw if isinstance(raw, dict) else {}
        qid = raw.get("question_id")
        if not isinstance(qid, str) or not qid:
            errors.append(f"answer {index} is missing question_id")
            continue
        if qid not in by_id:
            errors.append(f"answer {index} references unknown question id {qid!r}")
            continue
        if qid in seen:
            errors.append(f"answer {index} duplicates question id {qid!r}")
            continue
        seen.add(qid)
        selected = raw.get("selected_options") or []
        selected = [s for s in selected if isinstance(s, str)] if isinstance(selected, list) else []
        custom = _text(raw.get("custom_text"))
        errors += _answer_errors(index, by_id[qid], selected, custom)
        parsed.append(Answer(qid, selected[0] if selected else None, custom))
    if errors:
        raise InvalidBundle(errors)
    order = {q["id"]: i for i, q in enumerate(questions)}
    return tuple(sorted(parsed, key=lambda a: order[a.question_id]))


def _answer_errors(index: int, question: Mapping[str, Any], selected: list[str], custom: str) -> list[str]:
    """What is wrong with answer ``index``'s choice and text for ``question``; ``[]`` when nothing is."""
    errors = []
    valid_ids = {o["id"] for o in question["options"]}
    qid = question["id"]
    if any(s not in valid_ids for s in selected):
        errors.append(f"answer {index} selects an option that question {qid!r} does not have")
    if len(selected) > 1:
        errors.append(f"answer {index} selects more than one option")
    if selected and custom:
        errors.append(f"answer {index} has both a selected option and custom text")
    if not selected and not custom:
        errors.append(f"answer {index} answers nothing")
    if len(custom) > MAX_CUSTOM_TEXT:
        errors.append(f"answer {index} custom text must be at most {MAX_CUSTOM_TEXT} characters")
    return errors


def tool_result(
    questions: Sequence[Mapping[str, Any]], answers: tuple[Answer, ...], rejected: bool, reason: str
) -> dict:
    """Kandev's ask_user_question_kandev result, keyed by question id."""
    given = {a.question_id: a for a in answers}
    result: dict = {}
    for question in questions:
        qid = question["id"]
        answer = given.get(qid)
        if answer is None:
            result[qid] = {"answered": False}
            continue
        entry = {}
        if answer.selected_option:
            entry["selected_option"] = answer.selected_option
        if answer.custom_text:
            entry["custom_text"] = answer.custom_text
        result[qid] = entry
    if rejected:
        result["rejected"] = True
        result["reject_reason"] = reason
    return result
