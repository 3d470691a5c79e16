"""agentctl's answer problems in the operator's words: one sentence each, naming the question.

agentctl refuses an elicitation answer with ``VALIDATION_ERROR`` and a list
of problems, each a code with the question and option it is about
(``docs/agent-stream.md#agentelicitationsrespond``). The operator is told each
as a sentence, never the raw entry. Pure functions: the questions are the
record's, as shown in the overlay.
"""

from collections.abc import Iterable, Mapping

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
    }
)


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


def _about(name: str) -> str:
    """The sentence's opening: which question, when it is known."""
    if name:
        return _("Your answer to “%(question)s” does not fit:") % {"question": name}
    return _("Your answer does not fit:")


def _reason(code: str, problem: Mapping) -> str:
    if code == "unknown_option":
        return _("it picks an option the question does not offer.")
    if code == "too_many_options":
        return _("pick only one option.")
    if code == "text_not_accepted":
        return _("this question takes no typed text, only one of its options.")
    if code == "text_too_long":
        return _("typed text may be at most %(limit)d characters.") % {"limit": limits.ELICITATION_ANSWER_CHARS}
    if code == "duplicate_question":
        return _("it was answered twice.")
    if code == "unknown_question":
        return _("it answers a question this form does not have.")
    if code in MALFORMED:
        return _("the page sent it in a shape the agent cannot read. Reload the page and answer again.")
    # A code this version does not know: agentctl's own sentence, when it sent one.
    message = problem.get("message")
    if isinstance(message, str) and message.strip():
        return message.strip()
    return _("the agent refused it.")


def describe(problems: Iterable[object], questions: Iterable[Mapping]) -> tuple[str, ...]:
    """One sentence per distinct problem, in agentctl's order; anything unreadable still gets one."""
    names = {q.get("id"): question_name(q) for q in questions if isinstance(q, Mapping)}
    sentences: dict[str, None] = {}
    for problem in problems:
        problem = problem if isinstance(problem, Mapping) else {"message": problem if isinstance(problem, str) else ""}
        code = problem.get("code")
        code = code if isinstance(code, str) else ""
        question_id = problem.get("question_id")
        name = names.get(question_id, "") if isinstance(question_id, str) else ""
        if code == "unknown_question":
            name = ""
        sentences[f"{_about(name)} {_reason(code, problem)}"] = None
    return tuple(sentences) or (f"{_about('')} {_('the agent refused it.')}",)
