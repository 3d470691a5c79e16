"""What of an operator's answer may be kept: never what they typed into a credential-looking field.

A question agentctl marks ``sensitive`` (its key or title looks like a key,
token, password or secret) gets a password input in the overlay. What the
operator types there is sent to agentctl, which gives it to the agent, and
is kept nowhere else: not on the record, not in its timeline messages, so
never rendered back (``docs/decisions/operator.md#secrets``). The record keeps that a
value was sent. Pure: every write of a response goes through
:func:`stored_response` (``records``).

The ask_user_question_kandev path has no sensitive questions (Kandev's tool
has no such notion); its answer reaches the agent through the record, so a
question marked sensitive there would reach it empty, which fails closed.
"""

#: Set on a stored answer whose typed text was withheld.
WITHHELD = "withheld"


def sensitive_ids(questions: list[dict]) -> frozenset[str]:
    """The ids of the questions (as stored on a record) whose typed answers are secrets."""
    return frozenset(question["id"] for question in questions if question.get("sensitive"))


def stored_response(questions: list[dict], response: dict | None) -> dict | None:
    """``response`` as it may be stored and shown: typed text of sensitive questions withheld.

    - an operator's answer (``answers``) to a sensitive question keeps its
      picked options but not its text, and says ``withheld: true``;
    - the content that went on the wire (``content``, as agentctl reported
      it) loses the keys of sensitive questions; agentctl already leaves out
      their companions' and lists them in ``withheld``, which is kept.
    """
    if not response:
        return response
    secret = sensitive_ids(questions)
    if not secret:
        return response
    stored = dict(response)
    if isinstance(response.get("answers"), list):
        stored["answers"] = [_withhold(answer, secret) for answer in response["answers"]]
    if isinstance(response.get("content"), dict):
        stored["content"] = {key: value for key, value in response["content"].items() if key not in secret}
    return stored


def _withhold(answer: object, secret: frozenset[str]) -> object:
    if not isinstance(answer, dict) or answer.get("question_id") not in secret or not answer.get("custom_text"):
        return answer
    return {**answer, "custom_text": "", WITHHELD: True}


def is_withheld(response: dict | None, question_id: str | None) -> bool:
    """Whether a value the operator gave to ``question_id`` was sent but not kept."""
    response = response or {}
    if question_id in (response.get(WITHHELD) or []):
        return True
    return any(
        isinstance(answer, dict) and answer.get("question_id") == question_id and answer.get(WITHHELD)
        for answer in response.get("answers") or []
    )
