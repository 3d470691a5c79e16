"""agentctl's answer problems in the operator's words: one sentence each, naming the question.

agentctl alone judges an elicitation answer: it refuses one with
``VALIDATION_ERROR`` and lists every problem with a code, the question it is
about and the limit it broke (``docs/agent-stream.md``). The operator reads
each problem as a sentence beside its question in the overlay, and all of them
in the toast; never the raw entry, never their own answer quoted. A code this
module does not know is said with agentctl's own English ``message``. Pure
functions: the questions are the record's, as the overlay shows them.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.utils.translation import gettext as _

from kandev_web import limits

#: The longest question name quoted in a sentence; a long prompt is cut at a word, with an ellipsis.
NAME_CHARS = 60

#: Codes saying the page sent a payload agentctl cannot read: nothing the operator chose is wrong.
MALFORMED = frozenset(
    {
        "answers_not_a_list",
        "answer_not_an_object",
        "bad_question_id",
        "bad_selected_options",
        "bad_custom_text",
        "bad_pending_id",
        "bad_rejected",
        "bad_reject_reason",
        "bad_answer_ref",
    }
)


@dataclass(frozen=True)
class QuestionProblem:
    #: The question it is shown beside; empty for a problem with the whole answer.
    question_id: str
    sentence: str


def question_name(question: Mapping) -> str:
    """How a sentence names ``question``: its title, else its prompt (cut to ``NAME_CHARS``), else its id."""
    for key in ("title", "prompt", "id"):
        text = question.get(key)
        if isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            if len(text) <= NAME_CHARS:
                return text
            cut = text[: NAME_CHARS - 1]
            # At a word's end when there is one, so no word is shown half.
            return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return ""


def _format(limit: object) -> str:
    return {
        "email": _("an e-mail address"),
        "uri": _("a URL"),
        "date": _("a date"),
        "date-time": _("a date and time"),
    }.get(str(limit), _("in the form asked for"))


def _kind(limit: object) -> str:
    return {
        "boolean": _("yes or no"),
        "number": _("a number"),
        "integer": _("a whole number"),
    }.get(str(limit), _("text"))


def _templates() -> dict[str, str]:
    return {
        "unknown_option": _("Your answer to “%(question)s” picks an option the question does not offer."),
        "too_many_options": _("Pick only one option for “%(question)s”."),
        "text_not_accepted": _("“%(question)s” takes no typed text, only one of its options."),
        "text_too_long": _("Typed text for “%(question)s” may be at most %(limit)s characters."),
        "duplicate_question": _("“%(question)s” was answered twice."),
        "wrong_type": _("“%(question)s” must be %(kind)s."),
        "not_an_integer": _("“%(question)s” must be a whole number."),
        "below_minimum": _("“%(question)s” must be at least %(limit)s."),
        "above_maximum": _("“%(question)s” must be at most %(limit)s."),
        "too_short": _("“%(question)s” must be at least %(limit)s characters long."),
        "too_long": _("“%(question)s” must be at most %(limit)s characters long."),
        "pattern_mismatch": _("“%(question)s” is not in the form the agent asked for."),
        "format_mismatch": _("“%(question)s” must be %(format)s."),
        "too_few_items": _("Choose at least %(limit)s options for “%(question)s”."),
        "too_many_items": _("Choose at most %(limit)s options for “%(question)s”."),
        "required_unanswered": _("“%(question)s” needs an answer."),
        "value_not_accepted": _("“%(question)s” is answered by choosing its options."),
        "bad_value": _("The answer to “%(question)s” is not a value this question takes."),
    }


def _worded(code: str, name: str, limit: object) -> str | None:
    """The sentence for a code this version knows, or ``None``."""
    if code in MALFORMED:
        return _("The page sent your answer in a shape the agent cannot read. Reload the page and answer again.")
    if code == "unknown_question":
        return _("Your answer names a question this form does not have.")
    template = _templates().get(code)
    if template is None:
        return None
    if code == "text_too_long":
        limit = limits.ELICITATION_ANSWER_CHARS
    if "%(limit)s" in template and (isinstance(limit, bool) or not isinstance(limit, int | float | str)):
        return None  # A limit the sentence cannot say: agentctl's own message instead.
    # Formatted once: the agent's question name is a value here, never part of the template.
    return template % {"question": name, "limit": limit, "kind": _kind(limit), "format": _format(limit)}


def sentence(problem: object, questions: Iterable[Mapping]) -> QuestionProblem:
    """One entry of ``details.problems``, whatever its shape, as the operator is told it."""
    problem = problem if isinstance(problem, Mapping) else {}
    code = problem["code"] if isinstance(problem.get("code"), str) else ""
    question_id = problem["question_id"] if isinstance(problem.get("question_id"), str) else ""
    by_id = {q.get("id"): q for q in questions if isinstance(q, Mapping)}
    name = question_name(by_id.get(question_id) or {"id": question_id}) or _("this question")
    worded = _worded(code, name, problem.get("limit"))
    if worded is not None:
        return QuestionProblem(question_id if code != "unknown_question" else "", worded)
    # A code from a newer agentctl: its own sentence, when it sent one.
    message = problem.get("message")
    if isinstance(message, str) and message.strip():
        return QuestionProblem(question_id, message.strip())
    return QuestionProblem(question_id, _("The agent refused your answer."))


def sentence_for(code: str, question: Mapping, limit: object = None) -> str:
    """What the operator is told of ``code`` about ``question``, for the overlay to say it before sending."""
    return sentence({"code": code, "question_id": question.get("id", ""), "limit": limit}, [question]).sentence


def explain(problems: Iterable[object], questions: Iterable[Mapping]) -> tuple[QuestionProblem, ...]:
    """One sentence per distinct problem, in agentctl's order; an unreadable list still gets one."""
    questions = list(questions)
    said = dict.fromkeys(sentence(problem, questions) for problem in problems)
    return tuple(said) or (QuestionProblem("", _("The agent refused your answer.")),)
