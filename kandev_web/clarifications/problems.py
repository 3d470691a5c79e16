"""agentctl's ``VALIDATION_ERROR`` problems as sentences the operator reads beside each question.

agentctl alone judges an elicitation answer and lists every problem with a code,
the question it is about and the limit it broke (docs/agent-stream.md). The
sentence is written here, in the operator's language, naming the question as the
overlay does (its title, else its prompt); a code this module does not know is
said with agentctl's own English ``message``. The operator's answer is never quoted.
"""

from dataclasses import dataclass

from django.utils.translation import gettext as _


@dataclass(frozen=True)
class QuestionProblem:
    #: The question it is shown beside; empty for a problem with the whole answer.
    question_id: str
    sentence: str


def _name(question: dict | None, question_id: str) -> str:
    if question is None:
        return question_id
    return question.get("title") or question.get("prompt") or question_id


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


def sentence(problem: dict, questions: list[dict]) -> QuestionProblem:
    """One problem of ``details.problems`` as the operator is told it."""
    question_id = problem.get("question_id") if isinstance(problem.get("question_id"), str) else ""
    by_id = {q.get("id"): q for q in questions}
    name = {"question": _name(by_id.get(question_id), question_id or "")}
    limit = problem.get("limit")
    known = {
        "wrong_type": lambda: _("“%(question)s” must be %(kind)s.") % {**name, "kind": _kind(limit)},
        "not_an_integer": lambda: _("“%(question)s” must be a whole number.") % name,
        "below_minimum": lambda: _("“%(question)s” must be at least %(limit)s.") % {**name, "limit": limit},
        "above_maximum": lambda: _("“%(question)s” must be at most %(limit)s.") % {**name, "limit": limit},
        "too_short": lambda: _("“%(question)s” must be at least %(limit)s characters long.")
        % {**name, "limit": limit},
        "too_long": lambda: _("“%(question)s” must be at most %(limit)s characters long.") % {**name, "limit": limit},
        "pattern_mismatch": lambda: _("“%(question)s” is not in the form the agent asked for.") % name,
        "format_mismatch": lambda: _("“%(question)s” must be %(format)s.") % {**name, "format": _format(limit)},
        "too_few_items": lambda: _("Choose at least %(limit)s options for “%(question)s”.") % {**name, "limit": limit},
        "too_many_items": lambda: _("Choose at most %(limit)s options for “%(question)s”.") % {**name, "limit": limit},
        "required_unanswered": lambda: _("“%(question)s” needs an answer.") % name,
        "value_not_accepted": lambda: _("“%(question)s” is answered by choosing its options.") % name,
        "bad_value": lambda: _("The answer to “%(question)s” is not a value this question takes.") % name,
    }
    write = known.get(str(problem.get("code")))
    if write is not None:
        return QuestionProblem(question_id or "", write())
    message = problem.get("message")
    return QuestionProblem(question_id or "", message if isinstance(message, str) and message else str(problem))
